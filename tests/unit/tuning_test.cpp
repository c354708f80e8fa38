// The policy's prompt chunks on GPUs (gpuPrefillChunk): 256 tokens where a chunk multiplies by no
// more weights than one of GPT-2 124M's, 128 above that. No GL context needed.
#include <gtest/gtest.h>

#include "model/tuning.h"

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

}  // namespace
}  // namespace gpt2
