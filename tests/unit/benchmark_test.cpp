// The benchmark's own numbers (docs/benchmarks.md) on the gpt2-tiny fixture: draws and readback per
// decode step, and a per-pass profile whose entries cover every pass of the step.
#include <gtest/gtest.h>

#include "engine/benchmark.h"
#include "gl/pass.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"

namespace gpt2 {
namespace {

TEST(BenchmarkTest, CountsDrawsAndReadbackPerStepAndProfilesEveryPass) {
    testing::ensureGlContext();
    Engine engine(testing::tinyModelDir(), ModelOptions{});
    const BenchmarkResult r = runBenchmark(engine, 5, 3, true);
    const int layers = engine.config().layers;
    // 8 passes per layer, embedding, final LayerNorm, lm_head, and 2 top-k passes for one candidate.
    EXPECT_EQ(r.passesPerToken, 8 * layers + 3 + 2);
    EXPECT_EQ(r.readbackBytesPerToken, 16) << "a greedy step reads back one texel";
    EXPECT_GT(r.decodeMsPerToken, 0);
    EXPECT_GE(r.prefillMs, 0);
    EXPECT_EQ(r.gpuBytes, engine.model().gpuBytes());

    // Every shader of a decode step has an entry; each took some time, and together no more than a
    // generous multiple of a plain step (llvmpipe's timer queries once reported seconds per token
    // for a 5 ms step; software renderers are timed by wall clock for that reason).
    for (const char* pass : {"embedding.frag -> residual A", "layer_norm.frag -> layernorm output", "matmul.frag -> queries",
                             "attention_scores.frag -> attention scores", "attention_apply.frag -> attention output",
                             "matmul.frag -> logits", "topk_block.frag -> top-k block winners", "topk_select.frag -> top-k candidates"})
        EXPECT_EQ(r.profileMsPerToken.count(pass), 1u) << pass;
    double total = 0;
    for (const auto& [pass, ms] : r.profileMsPerToken) {
        EXPECT_GT(ms, 0) << pass;
        total += ms;
    }
    EXPECT_LT(total, 50 * r.decodeMsPerToken);
    const bool software = engine.model().capabilities().softwareRenderer;
    EXPECT_EQ(r.profileSource, std::string(software || !gpuTimersAvailable() ? "wall clock, each pass waiting for its result"
                                                                               : "gpu timer queries"));
}

}  // namespace
}  // namespace gpt2
