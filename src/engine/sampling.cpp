#include "engine/sampling.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <unordered_set>

#include "util/error.h"

namespace gpt2 {

void validateSampling(const SamplingOptions& o) {
    if (!(o.temperature >= 0.0f) || !std::isfinite(o.temperature))
        fail("temperature must be 0 (greedy) or positive, got ", o.temperature);
    if (o.topK && *o.topK < 1) fail("topK must be at least 1 (leave it unset to disable top-k), got ", *o.topK);
    if (!(o.topP > 0.0f && o.topP <= 1.0f)) fail("topP must be in (0, 1], got ", o.topP);
    if (!(o.repetitionPenalty > 0.0f) || !std::isfinite(o.repetitionPenalty))
        fail("repetitionPenalty must be positive (1 disables it), got ", o.repetitionPenalty);
}

void applyRepetitionPenalty(std::vector<TokenLogit>& candidates, const std::vector<int>& history, float penalty) {
    if (penalty == 1.0f) return;
    const std::unordered_set<int> seen(history.begin(), history.end());
    for (auto& c : candidates)
        if (seen.count(c.id)) c.logit = c.logit > 0 ? c.logit / penalty : c.logit * penalty;
}

namespace {
bool better(const TokenLogit& a, const TokenLogit& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}
}  // namespace

std::vector<std::pair<int, double>> Sampler::distribution(std::vector<TokenLogit> candidates,
                                                          const SamplingOptions& o) {
    std::sort(candidates.begin(), candidates.end(), better);
    if (o.topK && std::size_t(*o.topK) < candidates.size()) candidates.resize(std::size_t(*o.topK));
    const double top = candidates.front().logit;
    std::vector<std::pair<int, double>> probs;
    double total = 0;
    for (const auto& c : candidates) {
        probs.push_back({c.id, std::exp(double(c.logit) - top)});
        total += probs.back().second;
    }
    for (auto& p : probs) p.second /= total;
    if (o.topP < 1.0f) {
        // Keep tokens until their cumulative probability reaches top_p (the token that crosses it
        // stays), as Hugging Face's TopPLogitsWarper; at least one token always stays.
        double cumulative = 0;
        std::size_t keep = 0;
        while (keep < probs.size() && (keep == 0 || cumulative < o.topP)) cumulative += probs[keep++].second;
        probs.resize(keep);
        for (auto& p : probs) p.second /= cumulative;
    }
    return probs;
}

namespace {
std::uint32_t mixBits(std::uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

std::uint32_t chainBits(std::uint32_t h, std::uint32_t x) { return mixBits(h ^ (x + 0x9e3779b9u)); }

std::uint64_t randomSeed() {
    std::random_device device;
    return (std::uint64_t(device()) << 32) | device();
}
}  // namespace

double drawUniform(std::uint64_t seed, int draw) {
    std::uint32_t h =
        chainBits(chainBits(chainBits(0u, std::uint32_t(seed)), std::uint32_t(seed >> 32)), std::uint32_t(draw));
    h = chainBits(h, 0xffffffffu);
    return (double(h >> 9) + 0.5) / 8388608.0;
}

Sampler::Sampler(const SamplingOptions& options)
    : options_(options), seed_(options.seed ? *options.seed : randomSeed()) {
    validateSampling(options);
}

int Sampler::pick(std::vector<TokenLogit> candidates, const std::vector<int>& history, int draw,
                  const std::vector<float>& bias) {
    if (candidates.empty()) fail("sampling: no candidate tokens");
    applyRepetitionPenalty(candidates, history, options_.repetitionPenalty);
    if (!bias.empty())
        for (auto& c : candidates) c.logit += bias[std::size_t(c.id)];
    if (options_.greedy()) return std::min_element(candidates.begin(), candidates.end(), better)->id;
    for (auto& c : candidates) c.logit /= options_.temperature;
    const auto probs = distribution(std::move(candidates), options_);
    const double u = drawUniform(seed_, draw);
    double cumulative = 0;
    for (const auto& [id, p] : probs) {
        cumulative += p;
        if (u < cumulative) return id;
    }
    return probs.back().first;
}

}  // namespace gpt2
