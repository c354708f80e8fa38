// The policy's prompt chunks on GPUs (gpuPrefillChunk): 256 tokens where a chunk multiplies by no
// more weights than one of GPT-2 124M's, 128 above that (no GL context needed); the split-K of
// int8 and 4-bit weights' one-row matmuls; and the render targets a pass may write within the colour
// bits a framebuffer takes.
#include <gtest/gtest.h>

#include "model/tuning.h"
#include "support/gl_test_environment.h"
#include "util/error.h"

namespace gpt2 {
namespace {

ModelConfig shape(int layers, int embedDim, int innerDim) {
    ModelConfig c;
    c.layers = layers;
    c.embedDim = embedDim;
    c.innerDim = innerDim;
    return c;
}

TEST(TuningTest, GpuPromptChunksAreLongUpTo124MsWeightsPerToken) {
    EXPECT_EQ(gpuPrefillChunk(shape(12, 768, 3072)), Tuning::kGpuLongPrefillChunk) << "124M itself";
    EXPECT_EQ(gpuPrefillChunk(shape(6, 128, 512)), Tuning::kGpuLongPrefillChunk) << "the bundled model's shape";
    EXPECT_EQ(gpuPrefillChunk(shape(24, 1024, 4096)), Tuning::kGpuPrefillChunk) << "355M";
    EXPECT_EQ(gpuPrefillChunk(shape(36, 1280, 5120)), Tuning::kGpuPrefillChunk) << "774M";
    EXPECT_EQ(gpuPrefillChunk(shape(48, 1600, 6400)), Tuning::kGpuPrefillChunk) << "1.5B";
    EXPECT_EQ(gpuPrefillChunk(shape(13, 768, 3072)), Tuning::kGpuPrefillChunk) << "one block more than 124M";
    EXPECT_EQ(gpuPrefillChunk(shape(12, 768, 3076)), Tuning::kGpuPrefillChunk) << "124M with a wider MLP (n_inner)";
    EXPECT_EQ(gpuPrefillChunk(shape(24, 768, 768)), Tuning::kGpuLongPrefillChunk)
        << "twice the blocks with a quarter of the MLP: the same weights per token";
}

// 16 input texels and the instance take 17 varying vectors; OpenGL ES 3.0 promises 15.
TEST(TuningTest, QuantizedOneRowMatmulsSplitAsFarAsTheVaryingVectorsAllow) {
    EXPECT_EQ(gpuQuantizedRowSplitTexels(31), 16) << "NVIDIA";
    EXPECT_EQ(gpuQuantizedRowSplitTexels(17), 16);
    EXPECT_EQ(gpuQuantizedRowSplitTexels(16), 15);
    EXPECT_EQ(gpuQuantizedRowSplitTexels(15), 14) << "the OpenGL ES 3.0 minimum";
}

// Set, splitTexels applies to every matmul; the engine's own split gives int8 and 4-bit weights'
// one-row matmuls more input texels per instance where it splits at all.
TEST(TuningTest, AnExplicitSplitAppliesToQuantizedOneRowMatmulsToo) {
    testing::ensureGlContext();
    ModelOptions options;
    options.splitTexels = 3;
    EXPECT_EQ(tuningFor(options, shape(2, 64, 256)).quantizedRowSplitTexels, 3);
    options.splitTexels = 0;
    EXPECT_EQ(tuningFor(options, shape(2, 64, 256)).quantizedRowSplitTexels, 0);
    options.splitTexels = -1;
    const Tuning policy = tuningFor(options, shape(2, 64, 256));
    EXPECT_EQ(policy.quantizedRowSplitTexels,
              policy.splitTexels > 0 ? gpuQuantizedRowSplitTexels(policy.caps.varyingVectors) : 0);
    EXPECT_GE(policy.caps.varyingVectors, 15);
}

// ANGLE on Metal takes 512 colour bits in one framebuffer on A11 and later (4 RGBA32F targets), 256
// on A7-A10 (2), while MAX_DRAW_BUFFERS says 8: the policy keeps every pass within what it probed.
TEST(TuningTest, PassesStayWithinTheColourBitsOfOneFramebuffer) {
    testing::ensureGlContext();
    ModelOptions options;
    const Tuning unrestricted = tuningFor(options, shape(2, 64, 256));
    EXPECT_GE(unrestricted.caps.colorBits, 4 * kTargetColorBits) << "WebGL2 guarantees 4 draw buffers";
    EXPECT_EQ(unrestricted.caps.renderTargets * kTargetColorBits, unrestricted.caps.colorBits);
    options.maxColorBits = 512;
    const Tuning a11 = tuningFor(options, shape(2, 64, 256));
    EXPECT_EQ(a11.caps.colorBits, 512);
    EXPECT_EQ(a11.caps.renderTargets, 4);
    EXPECT_EQ(a11.rowsPerFragment, 4);
    EXPECT_EQ(a11.rowsPerFragmentFor(3), 1);
    EXPECT_TRUE(a11.oneDrawWrites(3)) << "three outputs fit four targets";
    options.maxColorBits = 256;
    const Tuning a7 = tuningFor(options, shape(2, 64, 256));
    EXPECT_EQ(a7.caps.renderTargets, 2);
    EXPECT_EQ(a7.rowsPerFragment, 2);
    EXPECT_FALSE(a7.oneDrawWrites(3));
    EXPECT_TRUE(a7.passPerOutputFor(3)) << "the fused Q/K/V cannot write its three outputs in one pass";
    EXPECT_TRUE(a7.oneDrawWrites(2));
    options.rowsPerFragment = 4;
    EXPECT_THROW(tuningFor(options, shape(2, 64, 256)), Error) << "4 rows need 4 targets";
    options.rowsPerFragment = -1;
    options.maxColorBits = 128;
    try {
        tuningFor(options, shape(2, 64, 256));
        ADD_FAILURE() << "one target is too few";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("maxColorBits 128 is too small; use at least 256"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace gpt2
