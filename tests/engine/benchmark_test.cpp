// The benchmark's own numbers (docs/benchmarks.md) on the gpt2-tiny fixture: draws and readback per
// decode step, and a per-pass profile whose entries cover every pass of the step.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "engine/benchmark.h"
#include "gl/pass.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"

namespace gpt2 {
namespace {

struct PassCase {
    int splitTexels, passPerOutput, rowMomentsInVertex;
};

// Split-K 0 (software renderers' default), with the Q/K/V projection as a pass per output (their
// default) and as one pass, and split-K 8 (GPUs'). Without split-K each LayerNorm is one pass and the
// matmuls fetch their inputs; with it a decode step's LayerNorms are their row moments only,
// normalised by the one-row matmuls after them, whose vertex shaders fetch the inputs (and, with
// rowMomentsInVertex, sum the moments themselves) and write Q, K and V in one pass.
TEST(BenchmarkTest, CountsDrawsAndReadbackPerStepAndProfilesEveryPass) {
    testing::ensureGlContext();
    for (const auto& [split, perOutput, momentsInVertex] :
         std::vector<PassCase>{{0, 1, 0}, {0, 0, 0}, {8, -1, 0}, {8, -1, 1}}) {
        ModelOptions options;
        options.splitTexels = split;
        options.passPerOutput = perOutput;
        options.rowMomentsInVertex = momentsInVertex;
        Engine engine(testing::tinyModelDir(), options);
        if (split > 0 && !engine.model().capabilities().floatBlend) continue;  // split-K needs float blending
        const BenchmarkResult r = runBenchmark(engine, 5, 3, true);
        const int layers = engine.config().layers;
        // Per layer 6 passes (8 with K and V in passes of their own) and 2 LayerNorm passes (none
        // where the one-row matmuls sum the moments); then the embedding, the final LayerNorm (the
        // same), lm_head, and 2 top-k passes for one candidate.
        const int layerNormPasses = momentsInVertex == 1 ? 0 : 1;
        EXPECT_EQ(r.passesPerToken, layers * ((perOutput == 1 ? 8 : 6) + 2 * layerNormPasses) + 4 + layerNormPasses)
            << "split " << split << ", moments in vertex " << momentsInVertex;
        EXPECT_EQ(r.readbackBytesPerToken, 16) << "a greedy step reads back one texel";
        EXPECT_GT(r.decodeMsPerToken, 0);
        EXPECT_GE(r.prefillMs, 0);
        EXPECT_EQ(r.gpuBytes, engine.model().gpuBytes());
        // The row says what the policy chose within: the colour bits a pass may write, as probed.
        const auto row = nlohmann::json::parse(benchmarkJson(r));
        EXPECT_EQ(row.at("color_bits").get<int>(), engine.model().capabilities().colorBits);
        EXPECT_EQ(row.at("render_targets").get<int>() * kTargetColorBits, row.at("color_bits").get<int>());

        // Every shader of a decode step has an entry; each took some time, and together no more than a
        // generous multiple of a plain step (software renderers are timed by wall clock, since llvmpipe's
        // timer queries are wrong: docs/benchmarks.md, `profile_source`).
        const std::string matmul = split > 0 ? "matmul_row.vert + matmul.frag" : "matmul.frag";
        std::vector<std::string> passes = {"embedding.frag -> residual A",
                                           matmul + " -> queries",
                                           "attention_scores.frag -> attention scores",
                                           "attention_apply.frag -> attention output",
                                           matmul + " -> residual B",
                                           matmul + " -> mlp hidden",
                                           matmul + " -> residual A",
                                           matmul + " -> logits",
                                           "topk_block.frag -> top-k blocks",
                                           "topk_merge.frag -> top-k candidates"};
        if (momentsInVertex == 0)
            passes.push_back(split > 0 ? "layer_norm_moments.frag -> layernorm moments"
                                       : "layer_norm.frag -> layernorm output");
        if (perOutput == 1)
            for (int layer = 0; layer < layers; ++layer)
                for (const char* cache : {"k", "v"})
                    passes.push_back(matmul + " -> h." + std::to_string(layer) + "." + cache + " cache");
        for (const std::string& pass : passes) EXPECT_EQ(r.profileMsPerToken.count(pass), 1u) << pass;
        EXPECT_EQ(r.profileMsPerToken.size(), passes.size());
        double total = 0;
        for (const auto& [pass, ms] : r.profileMsPerToken) {
            EXPECT_GT(ms, 0) << pass;
            total += ms;
        }
        EXPECT_LT(total, 50 * r.decodeMsPerToken);
        // The prompt runs the same shaders (a prompt of 5 tokens, so no decode-only one-row variants
        // where split; its attention works in the chunk's scores, with a pass for their row maxima),
        // and only the final position reaches lm_head.
        for (const char* pass : {"embedding.frag -> residual A", "attention_scores.frag -> chunk attention scores",
                                 "attention_row_max.frag -> chunk attention row maxima",
                                 "attention_apply.frag -> attention output", "topk_merge.frag -> top-k candidates"})
            EXPECT_GT(r.profilePrefillMs.count(pass) ? r.profilePrefillMs.at(pass) : 0.0, 0) << pass;
        const bool software = engine.model().capabilities().softwareRenderer;
        EXPECT_EQ(r.profileSource,
                  std::string(software || !gpuTimersAvailable() ? "wall clock, each pass waiting for its result"
                                                                : "gpu timer queries"));
    }
}

}  // namespace
}  // namespace gpt2
