#pragma once
// Choosing the next token from logits, as Hugging Face's generate() does: repetition penalty, then
// temperature, top-k and top-p (nucleus), then a draw from the softmax. Temperature 0 is greedy.
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "option_defaults.h"

namespace gpt2 {

struct SamplingOptions {
    float temperature = defaults::temperature;  // 0: greedy; > 0: sample
    std::optional<int> topK;                    // keep the k most likely tokens (k >= 1)
    float topP = defaults::topP;                // keep the smallest set whose probability reaches p, in (0, 1]
    float repetitionPenalty = defaults::repetitionPenalty;  // > 0; Hugging Face's CTRL-style penalty on tokens already in the sequence
    std::optional<std::uint64_t> seed;  // the same seed gives the same tokens; none: a random seed

    bool greedy() const { return temperature == 0.0f; }
};

// Throws Error naming the bad option and its valid range.
void validateSampling(const SamplingOptions& options);

struct TokenLogit {
    int id;
    float logit;
};

// Applies Hugging Face's repetition penalty in place: for each id in `history`, a positive logit is
// divided by `penalty` and a negative one multiplied by it.
void applyRepetitionPenalty(std::vector<TokenLogit>& candidates, const std::vector<int>& history, float penalty);

class Sampler {
public:
    explicit Sampler(const SamplingOptions& options);
    // Picks a token from `candidates` (all logits, or the GPU's top candidates when they are known to
    // contain every token that top-k could keep). `history` is the sequence so far.
    int pick(std::vector<TokenLogit> candidates, const std::vector<int>& history);
    // Top-k and top-p on (already penalised and tempered) candidates: the survivors, best first, with
    // their probabilities renormalised. Exposed for tests.
    static std::vector<std::pair<int, double>> distribution(std::vector<TokenLogit> candidates, const SamplingOptions& options);

private:
    SamplingOptions options_;
    std::mt19937_64 rng_;
};

}  // namespace gpt2
