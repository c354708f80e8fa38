// Sampling against its definition, on a fixed small logits vector (no GPU): the frequencies of
// temperature, top-k and top-p draws, Hugging Face's repetition penalty, and seeded reproducibility.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "engine/sampling.h"
#include "engine/stop_strings.h"
#include "util/error.h"

namespace gpt2 {
namespace {

const std::vector<TokenLogit> kLogits = {{0, 2.0f}, {1, 1.0f}, {2, 0.5f}, {3, 0.0f}, {4, -1.0f}, {5, -3.0f}};

std::vector<double> softmax(const std::vector<double>& logits) {
    double total = 0;
    std::vector<double> p;
    for (double l : logits) total += std::exp(l);
    for (double l : logits) p.push_back(std::exp(l) / total);
    return p;
}

// Draws n samples and checks each token's frequency against `expected` within 5 standard errors
// (sqrt(p(1-p)/n)): a false failure has probability below 1e-5 per token.
void expectFrequencies(const SamplingOptions& options, const std::vector<double>& expected, int n = 40000) {
    Sampler sampler(options);
    std::map<int, int> counts;
    for (int i = 0; i < n; ++i) ++counts[sampler.pick(kLogits, {}, i)];
    for (std::size_t id = 0; id < expected.size(); ++id) {
        const double p = expected[id], freq = double(counts[int(id)]) / n;
        const double sigma = std::sqrt(std::max(p * (1 - p), 1e-12) / n);
        if (p == 0) {
            EXPECT_EQ(counts[int(id)], 0) << "token " << id << " must never be drawn";
        } else {
            EXPECT_NEAR(freq, p, 5 * sigma + 1e-9) << "token " << id;
        }
    }
}

SamplingOptions sampling(float temperature, std::optional<int> topK = {}, float topP = 1.0f) {
    SamplingOptions o;
    o.temperature = temperature;
    o.topK = topK;
    o.topP = topP;
    o.seed = 12345;
    return o;
}

TEST(Sampling, TemperatureScalesTheSoftmax) {
    expectFrequencies(sampling(1.0f), softmax({2, 1, 0.5, 0, -1, -3}));
    expectFrequencies(sampling(0.5f), softmax({4, 2, 1, 0, -2, -6}));
    expectFrequencies(sampling(2.0f), softmax({1, 0.5, 0.25, 0, -0.5, -1.5}));
}

TEST(Sampling, TopKKeepsTheKMostLikely) {
    auto p = softmax({2, 1, 0.5});
    p.resize(6, 0.0);
    expectFrequencies(sampling(1.0f, 3), p);
}

TEST(Sampling, TopPKeepsTheSmallestSetReachingP) {
    // softmax: 0.574, 0.211, 0.128, 0.078, 0.029, 0.004. Cumulative 0.574, 0.785, 0.913: p = 0.8
    // keeps tokens 0, 1 and 2 (the token that crosses p stays).
    auto p = softmax({2, 1, 0.5});
    p.resize(6, 0.0);
    expectFrequencies(sampling(1.0f, {}, 0.8f), p);
    // p below the first probability keeps only the best token.
    expectFrequencies(sampling(1.0f, {}, 0.3f), {1, 0, 0, 0, 0, 0});
}

TEST(Sampling, GreedyTakesTheLargestAndBreaksTiesBySmallerId) {
    Sampler sampler(sampling(0.0f));
    EXPECT_EQ(sampler.pick(kLogits, {}, 0), 0);
    EXPECT_EQ(sampler.pick({{7, 1.0f}, {3, 1.0f}, {5, 0.5f}}, {}, 1), 3);
}

TEST(Sampling, RepetitionPenaltyFollowsHuggingFace) {
    std::vector<TokenLogit> c = {{0, 2.0f}, {1, -1.0f}, {2, 3.0f}};
    applyRepetitionPenalty(c, {0, 1, 0}, 2.0f);
    EXPECT_FLOAT_EQ(c[0].logit, 1.0f);   // positive: divided
    EXPECT_FLOAT_EQ(c[1].logit, -2.0f);  // negative: multiplied
    EXPECT_FLOAT_EQ(c[2].logit, 3.0f);   // not in the history: unchanged
    SamplingOptions o = sampling(0.0f);
    o.repetitionPenalty = 3.0f;
    Sampler sampler(o);
    EXPECT_EQ(sampler.pick(kLogits, {0}, 0), 1);  // 2 / 3 < 1: the repeated best token loses
}

TEST(Sampling, TheSameSeedGivesTheSameSequence) {
    auto draw = [](std::uint64_t seed) {
        SamplingOptions o = sampling(1.0f);
        o.seed = seed;
        Sampler sampler(o);
        std::vector<int> ids;
        for (int i = 0; i < 200; ++i) ids.push_back(sampler.pick(kLogits, {}, i));
        return ids;
    };
    EXPECT_EQ(draw(7), draw(7));
    EXPECT_NE(draw(7), draw(8));
}

TEST(Sampling, RejectsOptionsOutsideTheirRange) {
    EXPECT_THROW(validateSampling(sampling(-0.5f)), Error);
    EXPECT_THROW(validateSampling(sampling(NAN)), Error);
    EXPECT_THROW(validateSampling(sampling(1.0f, 0)), Error);
    EXPECT_THROW(validateSampling(sampling(1.0f, -3)), Error);
    EXPECT_THROW(validateSampling(sampling(1.0f, {}, 0.0f)), Error);
    EXPECT_THROW(validateSampling(sampling(1.0f, {}, 1.01f)), Error);
    SamplingOptions o = sampling(1.0f);
    o.repetitionPenalty = 0.0f;
    EXPECT_THROW(validateSampling(o), Error);
    EXPECT_NO_THROW(validateSampling(sampling(0.0f, 1, 1.0f)));
}

TEST(StopStrings, HoldsBackPossibleStartsAndNeverEmitsTheStop) {
    StopStringFilter filter({"\n\n", "END"});
    EXPECT_EQ(filter.push("Hello E"), "Hello ");  // "E" may start "END"
    EXPECT_EQ(filter.push("N"), "");
    EXPECT_EQ(filter.push("x"), "ENx");  // it did not
    EXPECT_EQ(filter.push(" and\n"), " and");
    EXPECT_FALSE(filter.stopped());
    EXPECT_EQ(filter.push("\nmore"), "");
    EXPECT_TRUE(filter.stopped());
    EXPECT_EQ(filter.push("later"), "");
    EXPECT_EQ(filter.flush(), "");
}

TEST(StopStrings, FlushReleasesHeldTextWhenNoStopCame) {
    StopStringFilter filter({"END"});
    EXPECT_EQ(filter.push("the E"), "the ");
    EXPECT_EQ(filter.flush(), "E");
    EXPECT_THROW(StopStringFilter({""}), Error);
}

}  // namespace
}  // namespace gpt2
