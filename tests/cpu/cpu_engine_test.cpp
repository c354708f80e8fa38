// The engine's public C++ API on the CPU backend against the same calls on the GPU's: a generation
// with live views (lens and attention at every position), sampling with a seed, perplexity and the
// offline lens. The GPU path is checked against Hugging Face elsewhere (tests/model, and the CLI on
// both backends in tests/engine/cli_test.cpp); here the two backends must agree.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"

namespace gpt2 {
namespace {

using testing::maxAbsDiff;

// fp32 on both sides, sums in other orders: the logits agree to about 1e-5 (each within 1e-4 of
// Hugging Face's); probabilities, which are at most 1, to less.
constexpr float kTolerance = 1e-4f;

ModelOptions onBackend(Backend backend) {
    ModelOptions options{TexelFormat::Float32};
    options.backend = backend;
    return options;
}

std::vector<GeneratedToken> generate(Engine& engine, const std::vector<int>& prompt, const GenerateOptions& options) {
    Generation generation(engine, prompt, options);
    std::vector<GeneratedToken> tokens;
    while (auto token = generation.next()) tokens.push_back(std::move(*token));
    return tokens;
}

TEST(CpuEngine, GenerationWithLiveViewsAgreesWithTheGpu) {
    testing::ensureGlContext();
    Engine gpu(testing::tinyModelDir(), onBackend(Backend::WebGl));
    Engine cpu(testing::tinyModelDir(), onBackend(Backend::Cpu));
    EXPECT_STREQ(cpu.runner().backend(), "cpu");
    const auto& p1 = testing::tinyPrompts().front();
    GenerateOptions options;
    options.maxNewTokens = 4;
    options.stopAtEndOfText = false;
    options.capture = {3, 1, 0};
    const auto want = generate(gpu, p1.ids, options);
    const auto got = generate(cpu, p1.ids, options);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(got.front().captured.size(), p1.ids.size()) << "the prompt's positions come with the first token";
    int positions = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].id, p1.greedy[i]) << "token " << i;
        ASSERT_EQ(got[i].captured.size(), want[i].captured.size()) << "token " << i;
        for (std::size_t p = 0; p < got[i].captured.size(); ++p, ++positions) {
            const CapturedPosition &c = got[i].captured[p], &g = want[i].captured[p];
            EXPECT_EQ(c.position, g.position);
            EXPECT_LE(maxAbsDiff(c.attention, g.attention), kTolerance) << "position " << c.position;
            ASSERT_EQ(c.lens.size(), g.lens.size());
            for (std::size_t l = 0; l < c.lens.size(); ++l) {
                EXPECT_EQ(c.lens[l].ids, g.lens[l].ids) << "position " << c.position << " layer " << l;
                EXPECT_LE(maxAbsDiff(c.lens[l].probs, g.lens[l].probs), kTolerance);
            }
        }
    }
    EXPECT_EQ(positions, int(p1.ids.size() + got.size() - 1));
    EXPECT_EQ(cpu.runner().capture().lensTopK, 0) << "the capture ends with its generation";
}

// The CPU backend's tokens are drawn by the engine's sampler from all the logits, the GPU's among its
// candidates; both take draw d's number from the seed (engine/sampling.h), so they pick the same.
TEST(CpuEngine, SamplingWithASeedDrawsTheGpusTokens) {
    testing::ensureGlContext();
    Engine gpu(testing::tinyModelDir(), onBackend(Backend::WebGl));
    Engine cpu(testing::tinyModelDir(), onBackend(Backend::Cpu));
    GenerateOptions options;
    options.maxNewTokens = 12;
    options.stopAtEndOfText = false;
    options.sampling.temperature = 1.0f;
    options.sampling.topK = 20;
    options.sampling.topP = 0.9f;
    options.sampling.seed = 7;
    const std::vector<int> prompt = testing::tinyPrompts().front().ids;
    for (const std::uint64_t seed : {7, 8, 9}) {
        options.sampling.seed = seed;
        const std::vector<int> ids = cpu.generate(prompt, options).ids;
        EXPECT_EQ(ids, gpu.generate(prompt, options).ids) << "seed " << seed;
        EXPECT_EQ(ids, cpu.generate(prompt, options).ids) << "seed " << seed;
    }
}

TEST(CpuEngine, PerplexityAndLensAgreeWithTheGpu) {
    testing::ensureGlContext();
    Engine gpu(testing::tinyModelDir(), onBackend(Backend::WebGl));
    Engine cpu(testing::tinyModelDir(), onBackend(Backend::Cpu));
    std::vector<int> ids;
    for (const auto& prompt : testing::tinyPrompts()) ids.insert(ids.end(), prompt.ids.begin(), prompt.ids.end());
    ids.resize(std::min<std::size_t>(ids.size(), 40));
    EXPECT_NEAR(cpu.perplexity(ids, 16).nll, gpu.perplexity(ids, 16).nll, 1e-5);
    const auto want = gpu.lens(ids, 4), got = cpu.lens(ids, 4);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t l = 0; l < got.size(); ++l) {
        ASSERT_EQ(got[l].size(), ids.size());
        for (std::size_t t = 0; t < ids.size(); ++t) {
            EXPECT_EQ(got[l][t].ids.front(), want[l][t].ids.front()) << "layer " << l << " position " << t;
            EXPECT_LE(maxAbsDiff(got[l][t].probs, want[l][t].probs), kTolerance);
        }
    }
    // The lens ends as a forward does: the last position's logits are there.
    EXPECT_LE(maxAbsDiff(cpu.logits(), gpu.logits()), kTolerance);
}

}  // namespace
}  // namespace gpt2
