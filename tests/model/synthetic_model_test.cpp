// Any Hugging Face GPT-2 config with n_embd % n_head == 0 runs: random-weight checkpoints of unusual
// shapes (head dims 24, 6 and 5; widths 120, 30, 40; untied lm_head; relu and erf-GELU; unscaled and
// layer-scaled attention) against the CPU reference, unfolded and with tiny texture limits.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "engine/engine.h"
#include "reference/cpu_reference.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/random_checkpoint.h"

namespace gpt2 {
namespace {

// fp32 arithmetic in a different order from the double reference: 1e-3 absolute on logits that
// reach |15| with these random weights (about 7e-5 relative). fp16 cases compare with the reference
// over the same rounded weights, so the same tolerance holds.
constexpr float kLogitTolerance = 1e-3f;
constexpr float kAttentionTolerance = 1e-4f;

struct SyntheticCase {
    const char* name;
    ModelConfig config;
    int maxTextureSize;
    int prefillChunk = 32;
    int lineWidth = -1;
    int splitTexels = -1;
    TexelFormat weights = TexelFormat::Float32;
    int rowsPerFragment = -1;
    int promptSplitTexels = -1;  // -1 here is splitTexels
    int pagedRows = -1;          // ModelOptions::pagedRows; -1 is on for the software renderers tests use
};

std::vector<SyntheticCase> cases() {
    auto a = testing::shapeConfig(500, 48, 120, 3, 5, 480, Activation::GeluTanh);
    auto b = testing::shapeConfig(301, 20, 30, 2, 5, 50, Activation::Relu);
    b.tieWordEmbeddings = false;
    b.scaleAttentionByInverseLayer = true;
    auto c = testing::shapeConfig(97, 16, 40, 1, 8, 72, Activation::GeluErf);
    c.scaleAttentionWeights = false;
    c.layerNormEpsilon = 1e-3f;
    return {
        {"embd120_heads5_layers3_unfolded_rows", a, 0, 32, 0},
        {"embd120_heads5_layers3_max32_chunk5", a, 32, 5},
        {"embd30_headdim6_untied_relu", b, 0},
        {"embd30_headdim6_untied_relu_max16", b, 16},
        {"embd40_headdim5_erf_unscaled", c, 0},
        // Split-K (as on GPUs), which moves the activation to the MLP projection's input.
        {"embd120_heads5_layers3_split5", a, 0, 32, 0, 5},
        {"embd30_headdim6_untied_relu_split2", b, 0, 32, 0, 2},
        {"embd40_headdim5_erf_unscaled_split1", c, 0, 32, 0, 1},
        // fp16 row pairs, split-K into rows folded over whole lines of 4 texels.
        {"embd120_heads5_layers3_fp16_split5_line4", a, 0, 32, 4, 5, TexelFormat::Float16},
        {"embd30_headdim6_untied_relu_fp16_max16", b, 16, 32, -1, -1, TexelFormat::Float16},
        // Prompt matmuls tiled over groups of rows; chunks of 5 leave rows on either side of the
        // groups to the untiled pass, and a chunk may start inside a group whose earlier rows
        // (the K/V cache of earlier chunks) must keep their values.
        {"embd120_heads5_layers3_split5_tiles4_chunk5_prompt_split3", a, 0, 5, -1, 5, TexelFormat::Float32, 4, 3},
        {"embd30_headdim6_untied_relu_split2_tiles8_max16_prompt_split4", b, 16, 32, -1, 2, TexelFormat::Float32, 8, 4},
        {"embd40_headdim5_erf_unscaled_fp16_tiles2_chunk7", c, 0, 7, -1, -1, TexelFormat::Float16, 2},
        // As GPUs lay out folded matrices (whole rows per line): the LayerNorm row moments of
        // 20 one-texel rows at 16 texels per line share lines, so they cannot be a split pass;
        // the one-row matmul then reads the normalisation pass's output.
        {"embd30_headdim6_untied_relu_split2_max16_rows_per_line", b, 16, 32, -1, 2, TexelFormat::Float32, -1, -1, 0}};
}

class SyntheticModelTest : public ::testing::TestWithParam<SyntheticCase> {};

TEST_P(SyntheticModelTest, MatchesCpuReference) {
    testing::ensureGlContext();
    const auto& param = GetParam();
    const std::string dir = testing::writeSyntheticCheckpoint(param.config, 7);
    const HuggingFaceCheckpoint checkpoint(dir);
    // fp16 as row pairs: the fixture tests cover RGBA16F.
    // fp16 prompt inputs off: the reference rounds the weights only (the fixture tests cover them).
    Engine engine(
        dir, ModelOptions{param.weights, param.maxTextureSize, param.prefillChunk, param.lineWidth, param.splitTexels,
                          param.pagedRows, 1, -1, param.rowsPerFragment,
                          param.promptSplitTexels >= 0 ? param.promptSplitTexels : param.splitTexels, -1, -1, 0});

    std::vector<int> ids;
    for (int i = 0; i < param.config.contextLength - 2; ++i) ids.push_back((i * 7919 + 13) % param.config.vocabSize);
    const auto expected = reference::forward(checkpoint, ids, {param.weights == TexelFormat::Float16});
    const std::size_t V = std::size_t(param.config.vocabSize);

    // Every position's logits through decode steps (prefill of one token, then the KV cache).
    engine.prefill({ids[0]});
    float worst = 0;
    for (std::size_t t = 0; t < ids.size(); ++t) {
        if (t > 0) engine.step(ids[t]);
        const std::vector<float> want(expected.logits.begin() + std::ptrdiff_t(t * V),
                                      expected.logits.begin() + std::ptrdiff_t((t + 1) * V));
        const float diff = testing::maxAbsDiff(engine.logits(), want);
        ASSERT_LE(diff, kLogitTolerance) << "position " << t;
        worst = std::max(worst, diff);
    }
    // The same sequence in one prefill.
    engine.prefill(ids);
    const std::vector<float> last(expected.logits.end() - std::ptrdiff_t(V), expected.logits.end());
    EXPECT_LE(testing::maxAbsDiff(engine.logits(), last), kLogitTolerance);
    for (int layer = 0; layer < param.config.layers; ++layer)
        EXPECT_LE(testing::maxAbsDiff(engine.attention(layer), expected.attention[std::size_t(layer)]),
                  kAttentionTolerance)
            << "layer " << layer;
    float largest = 0;
    for (float v : expected.logits) largest = std::max(largest, std::fabs(v));
    std::filesystem::remove_all(dir);
    std::cout << "[ measured ] " << param.name << ": max |dlogit| = " << worst << " (largest |logit| " << largest
              << ")\n";
}

INSTANTIATE_TEST_SUITE_P(Configs, SyntheticModelTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace gpt2
