// Decoding with the KV cache equals full recomputation at every step (max |dlogit| <= 1e-4).
#include <gtest/gtest.h>

#include <string>

#include "engine/engine.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "util/error.h"

namespace gpt2 {
namespace {

// Decodes prompt p2 (40 tokens) token by token with `cached` and recomputes each prefix with `fresh`;
// returns the largest |dlogit| over the steps, failing at the first step over 1e-4.
float worstStepDifference(Engine& cached, Engine& fresh, const std::string& label) {
    const auto& ids = testing::tinyPrompts()[1].ids;
    EXPECT_GE(ids.size(), 30u);
    cached.prefill({ids[0]});
    float worst = 0;
    for (std::size_t t = 1; t < ids.size(); ++t) {
        cached.step(ids[t]);
        fresh.prefill(std::vector<int>(ids.begin(), ids.begin() + std::ptrdiff_t(t + 1)));
        const float diff = testing::maxAbsDiff(cached.logits(), fresh.logits());
        if (diff > 1e-4f) ADD_FAILURE() << "step " << t << ", " << label << ": max |dlogit| " << diff;
        if (diff > 1e-4f) return diff;
        worst = std::max(worst, diff);
    }
    std::cout << "[ measured ] " << label << ": KV cache vs recomputation max |dlogit| = " << worst << "\n";
    return worst;
}

TEST(KvCache, DecodeEqualsRecomputationAtEveryStep) {
    testing::ensureGlContext();
    for (int maxTextureSize : {0, 256}) {
        // Decoding with rows unfolded and split-K matmuls (as on GPUs) against recomputation in
        // prefill chunks of 7 tokens with activation lines of 4 texels and one loop per matmul (as
        // software renderers fold them, narrower).
        Engine cached(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32, maxTextureSize, 32, 0, 3});
        Engine fresh(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32, maxTextureSize, 7, 4, 0});
        worstStepDifference(cached, fresh, "max texture " + std::to_string(maxTextureSize));
    }
}

TEST(KvCache, DecodeOverBlocksOfKeysEqualsRecomputation) {
    testing::ensureGlContext();
    // Steps past 8 positions split attention over blocks of 8 keys (flash-decoding), most of them
    // with a partial last block; recomputation runs attention in one pass.
    ModelOptions blocked{TexelFormat::Float32}, whole{TexelFormat::Float32};
    blocked.attentionBlockKeys = 8;
    whole.attentionBlockKeys = 0;
    Engine cached(testing::tinyModelDir(), blocked), fresh(testing::tinyModelDir(), whole);
    worstStepDifference(cached, fresh, "blocks of 8 keys");
}

// A polled prefill (as the browsers run one) may issue the next chunk while up to chunksInFlight
// are unfinished: whatever the GPU's progress, chunkDone() allows that many before the first has
// finished, and the logits are those of the blocking prefill.
TEST(KvCache, APolledPrefillKeepsUpToChunksInFlightQueued) {
    testing::ensureGlContext();
    const auto& ids = testing::tinyPrompts()[1].ids;
    Engine blocking(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32, 0, 5});
    blocking.prefill(ids);
    const std::vector<float> expected = blocking.logits();
    for (int inFlight : {1, 2, 3}) {
        ModelOptions options{TexelFormat::Float32, 0, 5};
        options.chunksInFlight = inFlight;
        Engine engine(testing::tinyModelDir(), options);
        engine.beginPrefill(ids);
        for (int issued = 0; issued < inFlight; ++issued) {
            EXPECT_TRUE(engine.chunkDone()) << issued << " chunks issued, " << inFlight << " in flight";
            ASSERT_FALSE(engine.prefillStep());
        }
        LogitsRun run(engine, ids);
        while (!run.poll()) {
        }
        EXPECT_EQ(run.take(), expected) << inFlight << " in flight";
    }
    ModelOptions none{TexelFormat::Float32};
    none.chunksInFlight = 0;
    EXPECT_THROW(Engine(testing::tinyModelDir(), none), Error);
}

TEST(KvCache, FillsTheWholeContextAndThenRefusesClearly) {
    testing::ensureGlContext();
    Engine engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32});
    const int context = engine.config().contextLength;
    engine.prefill({50256});
    for (int i = 1; i < context; ++i) engine.step(i);
    EXPECT_EQ(int(engine.tokens().size()), context);
    try {
        engine.step(1);
        FAIL() << "a step past the context must fail";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("context of 64 tokens"), std::string::npos) << e.what();
    }
    EXPECT_THROW(engine.prefill(std::vector<int>(std::size_t(context + 1), 1)), Error);
    EXPECT_THROW(engine.prefill({50257}), Error);  // outside the vocabulary
    engine.prefill({1, 2, 3});                     // still usable after the errors
    EXPECT_EQ(engine.logits().size(), 50257u);
}

}  // namespace
}  // namespace gpt2
