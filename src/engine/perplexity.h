#pragma once
// Perplexity of a token sequence under the model: the tokens are split into consecutive windows of
// `window` tokens, each run as a fresh sequence, and every token of a window but its first is scored
// by the log-probability the model gives it (TokenLogProbs).
#include <cstdint>
#include <vector>

#include "model/readouts/token_log_probs.h"

namespace gpt2 {

struct PerplexityResult {
    std::int64_t tokens = 0;  // tokens scored
    double nll = 0;           // mean negative log-likelihood, nats
    double perplexity = 0;    // exp(nll)
};

// `window` 0: `context`, the model's (n_positions). Fails on fewer than 2 tokens, or a window outside
// [2, context].
PerplexityResult scorePerplexity(TokenLogProbs& logProbs, int context, const std::vector<int>& ids, int window = 0);

}  // namespace gpt2
