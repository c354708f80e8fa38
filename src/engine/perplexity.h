#pragma once
// Perplexity of a token sequence under the model: the tokens are split into consecutive windows of
// `window` tokens, each run as a fresh sequence, and every token of a window but its first is scored
// by the log-probability the model gives it (ModelRunner::tokenLogProbs).
#include <cstdint>
#include <vector>

#include "engine/model_runner.h"

namespace gpt2 {

struct PerplexityResult {
    std::int64_t tokens = 0;  // tokens scored
    double nll = 0;           // mean negative log-likelihood, nats
    double perplexity = 0;    // exp(nll)
};

// `window` 0: the model's context (n_positions). Fails on fewer than 2 tokens, or a window outside
// [2, context].
PerplexityResult scorePerplexity(ModelRunner& model, const std::vector<int>& ids, int window = 0);

}  // namespace gpt2
