#pragma once
// Choosing the next token from logits, as Hugging Face's generate() does: repetition penalty, then
// temperature, top-k and top-p (nucleus), then a draw from the softmax. Temperature 0 is greedy.
#include <cstdint>
#include <optional>
#include <vector>

#include "option_defaults.h"

namespace gpt2 {

struct SamplingOptions {
    float temperature = defaults::temperature;  // 0: greedy; > 0: sample
    std::optional<int> topK;                    // keep the k most likely tokens (k >= 1)
    float topP = defaults::topP;                // keep the smallest set whose probability reaches p, in (0, 1]
    float repetitionPenalty =
        defaults::repetitionPenalty;    // > 0; Hugging Face's CTRL-style penalty on tokens already in the sequence
    std::optional<std::uint64_t> seed;  // the same seed gives the same tokens; none: a random seed

    bool greedy() const { return temperature == 0.0f; }
};

// Throws Error naming the bad option and its valid range.
void validateSampling(const SamplingOptions& options);

// What a logit bias gives a token that must not be drawn: finite, since shaders need not keep
// infinities, and far below any logit, penalised or divided by any temperature.
constexpr float kBannedLogit = -1.0e20f;

struct TokenLogit {
    int id;
    float logit;
};

// Applies Hugging Face's repetition penalty in place: for each id in `history`, a positive logit is
// divided by `penalty` and a negative one multiplied by it.
void applyRepetitionPenalty(std::vector<TokenLogit>& candidates, const std::vector<int>& history, float penalty);

// The number in (0, 1) that picks draw `draw` of `seed` among its candidates: the GPU's
// (shaders/sampling.glsl, drawUniform with id -1), bit for bit.
double drawUniform(std::uint64_t seed, int draw);

// Picks tokens on the CPU, where the GPU's sampler (src/model/ops/sampler.h) does not: from all the
// logits, with the same numbers for the same seed and draw.
class Sampler {
public:
    explicit Sampler(const SamplingOptions& options);
    // The seed: the options' own, or a random one.
    std::uint64_t seed() const { return seed_; }
    // Picks draw `draw` from `candidates` (all logits, or any set known to contain every token the
    // options can keep). `history` is the sequence so far; `bias` (vocab_size values, or none) is added
    // to each logit after the repetition penalty, as the GPU's sampler adds it.
    int pick(std::vector<TokenLogit> candidates, const std::vector<int>& history, int draw,
             const std::vector<float>& bias = {});
    // Top-k and top-p on (already penalised and tempered) candidates: the survivors, best first, with
    // their probabilities renormalised. Exposed for tests.
    static std::vector<std::pair<int, double>> distribution(std::vector<TokenLogit> candidates,
                                                            const SamplingOptions& options);

private:
    SamplingOptions options_;
    std::uint64_t seed_;
};

}  // namespace gpt2
