// The GPU sampler (src/model/ops/sampler.h) against the exact distribution: 20,000 draws of each kind
// of sampling from a fixture's logits (Hugging Face's, gpt2-tiny prompt p2), their counts compared by
// a chi-square test at p = 0.001 with the probabilities this file computes itself, in double, from
// the definitions (Hugging Face's order: repetition penalty, temperature, top-k, top-p). Each test
// also shows that it can fail: the same counts against a mutated sampler's distribution (temperature
// applied twice, top-p keeping one candidate too many or too few) are rejected.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>

#include "engine/sampling.h"
#include "gl/capabilities.h"
#include "model/ops.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"

namespace gpt2 {
namespace {

constexpr int kDraws = 20000;
constexpr int kBatch = 2000;  // draws per run of the op
constexpr int kRanks = 4;     // ranks per first-level fragment (render targets every GL ES 3.0 context has)

struct Setting {
    float temperature = 1.0f;
    int topK = 0;
    float topP = 1.0f;
    float penalty = 1.0f;
    std::set<int> banned = {};  // tokens not allowed
};

// The exact distribution of `s` over `logits`, `seen` penalised; topPExtra moves the top-p cut by
// that many candidates (a mutation).
std::vector<double> exactDistribution(const std::vector<float>& logits, const std::set<int>& seen, const Setting& s,
                                      int topPExtra = 0) {
    const int V = int(logits.size());
    std::vector<double> value(static_cast<std::size_t>(V));
    for (int i = 0; i < V; ++i) {
        double l = logits[std::size_t(i)];
        if (seen.count(i) && s.penalty != 1.0f) l = l > 0 ? l / s.penalty : l * s.penalty;
        if (s.banned.count(i)) l = -std::numeric_limits<double>::infinity();
        value[std::size_t(i)] = l / s.temperature;
    }
    std::vector<int> order(static_cast<std::size_t>(V));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return value[std::size_t(a)] > value[std::size_t(b)]; });
    const std::size_t kept = s.topK > 0 ? std::size_t(s.topK) : std::size_t(V);
    const double top = value[std::size_t(order[0])];
    std::vector<double> p(static_cast<std::size_t>(V), 0.0);
    double total = 0;
    for (std::size_t r = 0; r < kept; ++r) total += std::exp(value[std::size_t(order[r])] - top);
    std::size_t nucleus = kept;
    if (s.topP < 1.0f) {
        double mass = 0;
        nucleus = 0;
        while (nucleus < kept && (nucleus == 0 || mass < s.topP))
            mass += std::exp(value[std::size_t(order[nucleus++])] - top) / total;
        nucleus = std::size_t(std::max<long>(1, long(nucleus) + topPExtra));
    }
    double keptMass = 0;
    for (std::size_t r = 0; r < nucleus; ++r) keptMass += std::exp(value[std::size_t(order[r])] - top);
    for (std::size_t r = 0; r < nucleus; ++r)
        p[std::size_t(order[r])] = std::exp(value[std::size_t(order[r])] - top) / keptMass;
    return p;
}

// Pearson's chi-square of `counts` against `p` over bins of expected count >= 5 (the rest pooled),
// and its critical value at p = 0.001 (Wilson-Hilferty). A draw of probability 0 fails at once.
struct ChiSquare {
    double statistic = 0, critical = 0;
    int bins = 0;
    bool impossibleDraw = false;
    bool passes() const { return !impossibleDraw && statistic < critical; }
};

ChiSquare chiSquare(const std::map<int, int>& counts, const std::vector<double>& p, int n) {
    ChiSquare c;
    double pooledExpected = 0;
    int pooledCount = 0;
    for (std::size_t id = 0; id < p.size(); ++id) {
        const auto it = counts.find(int(id));
        const int count = it == counts.end() ? 0 : it->second;
        const double expected = p[id] * n;
        if (expected == 0 && count > 0) c.impossibleDraw = true;
        if (expected >= 5) {
            c.statistic += (count - expected) * (count - expected) / expected;
            ++c.bins;
        } else {
            pooledExpected += expected;
            pooledCount += count;
        }
    }
    for (const auto& [id, count] : counts)
        if (id < 0 || id >= int(p.size())) c.impossibleDraw = true;
    if (pooledExpected > 0) {
        c.statistic += (pooledCount - pooledExpected) * (pooledCount - pooledExpected) / std::max(pooledExpected, 1e-9);
        ++c.bins;
    }
    const double df = c.bins - 1, z = 3.0902;  // the normal's 0.999 quantile
    const double a = 2.0 / (9.0 * df);
    c.critical = df * std::pow(1.0 - a + z * std::sqrt(a), 3.0);
    return c;
}

class GpuSampling : public ::testing::Test {
protected:
    void SetUp() override {
        testing::ensureGlContext();
        const testing::ReferencePrompt& prompt = testing::tinyPrompts()[1];
        ASSERT_EQ(prompt.key, "p2");
        logits_ = prompt.lastLogits;
        // The sequence the repetition penalty sees: the prompt, and (so that the penalty moves mass
        // a test can see) the five most likely next tokens.
        std::vector<int> history = prompt.ids;
        for (int id : testing::topK(logits_, 5)) history.push_back(id);
        seen_.insert(history.begin(), history.end());
        const int V = int(logits_.size()), vocabRows = (V + 3) / 4 * 4;
        const auto limits = queryCapabilities().limits;
        auto texture = [&](const char* name, int rows, int cols, int interleave = 1) {
            textures_.push_back(std::make_unique<Texture>(TensorLayout::make(rows, cols, limits, name, 0, interleave),
                                                          TexelFormat::Float32, name));
            return textures_.back().get();
        };
        std::vector<float> padded(logits_);
        padded.resize(std::size_t(vocabRows), 0.0f);
        Texture* logits = texture("logits", 1, vocabRows);
        logits->uploadRows(0, 1, padded.data());
        Texture* ids = texture("ids", int(history.size()), 1);
        const std::vector<float> idValues(history.begin(), history.end());
        ids->uploadRows(0, int(idValues.size()), idValues.data());
        candidates_ = texture("candidates", kMaxTopk, 4 * kBatch);
        chosen_ = texture("chosen", kBatch, 4);
        allowed_ = texture("allowed", 1, (vocabRows + 15) / 16);
        Texture *seen = texture("seen", 1, vocabRows), *scratch = texture("seen scratch", 1, vocabRows),
                *blocks = texture("blocks", kBatch * kMaxTopk, topkBlockColumns(vocabRows / 4), kRanks),
                *heads = texture("block heads", kBatch * kRanks, topkBlockColumns(vocabRows / 4), kRanks);
        sampler_ = std::make_unique<SamplerOp>(programs_, *logits, *ids, *seen, *scratch, *allowed_, *blocks, *heads,
                                               *candidates_, *chosen_, V, kRanks);
        sampler_->markSeen(0, int(history.size()));
    }

    // Draws [0, n) of `s` with seed 1234 (-1: the GPU declined).
    std::vector<int> drawIds(const Setting& s, int n = kDraws) {
        TokenSampling sampling{s.temperature, s.topK, s.topP, s.penalty, 1234};
        // The allowed tokens as the engine uploads them: 16 bits a float.
        std::vector<std::uint32_t> words(logits_.size() / 32 + 1, ~0u);
        for (int id : s.banned) words[std::size_t(id) / 32] &= ~(1u << (id % 32));
        if (!s.banned.empty()) {
            std::vector<float> halves(std::size_t(allowed_->layout().cols), 0.0f);
            for (std::size_t w = 0; w < words.size() && 2 * w + 1 < halves.size(); ++w) {
                halves[2 * w] = float(words[w] & 0xFFFFu);
                halves[2 * w + 1] = float(words[w] >> 16);
            }
            allowed_->uploadRows(0, 1, halves.data());
            sampling.allowed = &words;
        }
        std::vector<int> ids;
        const int batch = sampling.greedy() ? 1 : kBatch;  // greedy gives one token
        for (int first = 0; first < n; first += batch) {
            Texture& result = sampler_->run(sampling, first, batch);
            const std::vector<float> texels =
                &result == candidates_ ? result.readRows(0, 1) : result.readRows(0, batch);
            for (int d = 0; d < batch && first + d < n; ++d) ids.push_back(int(texels[std::size_t(d) * 4 + 1]));
        }
        return ids;
    }

    std::map<int, int> draw(const Setting& s) {
        std::map<int, int> counts;
        for (int id : drawIds(s)) ++counts[id];
        return counts;
    }

    // The draws of `s` pass against its exact distribution and fail against `mutated`'s.
    void expectExactAndSensitive(const Setting& s, const std::vector<double>& mutated) {
        const std::map<int, int> counts = draw(s);
        const ChiSquare exact = chiSquare(counts, exactDistribution(logits_, seen_, s), kDraws);
        EXPECT_TRUE(exact.passes()) << "chi-square " << exact.statistic << " over " << exact.bins << " bins, critical "
                                    << exact.critical
                                    << (exact.impossibleDraw ? ", and a token of probability 0 was drawn" : "");
        const ChiSquare wrong = chiSquare(counts, mutated, kDraws);
        EXPECT_FALSE(wrong.passes()) << "the mutated distribution was not rejected: chi-square " << wrong.statistic
                                     << ", critical " << wrong.critical;
    }

    std::vector<float> logits_;
    std::set<int> seen_;
    ProgramCache programs_;
    std::vector<std::unique_ptr<Texture>> textures_;
    Texture *candidates_ = nullptr, *chosen_ = nullptr, *allowed_ = nullptr;
    std::unique_ptr<SamplerOp> sampler_;
};

Setting twice(Setting s) {
    s.temperature *= s.temperature;
    return s;
}

TEST_F(GpuSampling, TemperatureAloneDrawsFromTheTemperedSoftmax) {
    const Setting s{0.7f};
    expectExactAndSensitive(s, exactDistribution(logits_, seen_, twice(s)));
}

TEST_F(GpuSampling, TopKDrawsFromTheKMostLikelyRenormalised) {
    const Setting s{0.8f, 40};
    expectExactAndSensitive(s, exactDistribution(logits_, seen_, twice(s)));
}

TEST_F(GpuSampling, TopPDrawsFromTheSmallestSetReachingP) {
    const Setting s{0.5f, 0, 0.9f};
    expectExactAndSensitive(s, exactDistribution(logits_, seen_, s, 1));
    expectExactAndSensitive(s, exactDistribution(logits_, seen_, s, -1));
}

TEST_F(GpuSampling, RepetitionPenaltyWithTopKAndTopP) {
    const Setting s{0.8f, 50, 0.9f, 1.3f};
    expectExactAndSensitive(s, exactDistribution(logits_, seen_, s, 1));
    Setting unpenalised = s;
    unpenalised.penalty = 1.0f;
    expectExactAndSensitive(s, exactDistribution(logits_, seen_, unpenalised));
}

TEST_F(GpuSampling, RepetitionPenaltyWithTemperatureAlone) {
    const Setting s{0.7f, 0, 1.0f, 1.3f};
    Setting unpenalised = s;
    unpenalised.penalty = 1.0f;
    expectExactAndSensitive(s, exactDistribution(logits_, seen_, unpenalised));
}

// Tokens not allowed (a constraint's, or logitBias's bans): the three most likely, with top-k, top-p
// and the penalty. Against the same settings with all allowed, the counts fail.
TEST_F(GpuSampling, TokensNotAllowedAreNeverDrawn) {
    const std::vector<int> best = testing::topK(logits_, 3);
    const Setting s{0.8f, 40, 0.95f, 1.3f, {best.begin(), best.end()}};
    Setting all = s;
    all.banned.clear();
    expectExactAndSensitive(s, exactDistribution(logits_, seen_, all));
    const std::map<int, int> counts = draw(s);
    for (int id : best) EXPECT_EQ(counts.count(id), 0u) << "a banned token was drawn";
    // Greedy takes the best allowed token.
    EXPECT_EQ(drawIds(Setting{0.0f, 0, 1.0f, 1.0f, s.banned}, 1).front(), testing::topK(logits_, 4)[3]);
}

// Top-p alone whose 64 best candidates hold less than p (at T = 1 they hold 0.198): the GPU declines
// every draw rather than sample from a truncated distribution.
TEST_F(GpuSampling, TopPAloneBeyondTheCandidatesDeclines) {
    const std::map<int, int> counts = draw(Setting{1.0f, 0, 0.9f});
    ASSERT_EQ(counts.size(), 1u);
    EXPECT_EQ(counts.begin()->first, -1);
}

// The pick among candidates uses the engine's CPU sampler's numbers (it draws where the GPU
// declines): the same seed and draw give the same token, except where the draw's number falls within
// float rounding of a boundary between two tokens.
TEST_F(GpuSampling, PicksAmongCandidatesAsTheCpuSamplerDoes) {
    const Setting s{0.8f, 40, 0.95f, 1.3f};
    const int n = 400;
    const std::vector<int> gpu = drawIds(s, n);
    SamplingOptions options;
    options.temperature = s.temperature;
    options.topK = s.topK;
    options.topP = s.topP;
    options.repetitionPenalty = s.penalty;
    options.seed = 1234;
    Sampler cpu(options);
    const std::vector<int> history(seen_.begin(), seen_.end());
    std::vector<TokenLogit> all;
    for (std::size_t i = 0; i < logits_.size(); ++i) all.push_back({int(i), logits_[i]});
    int same = 0;
    for (int d = 0; d < n; ++d) same += cpu.pick(all, history, d) == gpu[std::size_t(d)];
    EXPECT_GE(same, n - 1) << "of " << n << " draws";
}

}  // namespace
}  // namespace gpt2
