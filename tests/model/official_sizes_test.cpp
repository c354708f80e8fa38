// gpt2-synth's official shapes load and generate natively: 124M through a GGUF F16 file (about
// 250 MB; its Conv1D weights are transposed on the GPU at real sizes) and 355M straight from its
// Hugging Face folder. Random weights: this checks shapes,
// folding at real sizes and that generation runs, not the text.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/engine.h"
#include "format/ggml_type.h"
#include "model/engine_matrices.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "weights-tools/gguf_writer.h"
#include "weights-tools/synthetic_checkpoint.h"

namespace gpt2 {
namespace {

namespace fs = std::filesystem;

void expectGenerates(const std::string& model) {
    Engine engine(model, ModelOptions{TexelFormat::Float16, 0});
    EXPECT_EQ(Engine::plannedGpuBytes(engine.config(), ModelOptions{TexelFormat::Float16, 0}), engine.gpuBytes())
        << "what a page is told before loading is what the model takes";
    GenerateOptions options;
    options.maxNewTokens = 3;
    options.stopAtEndOfText = false;
    const auto result = engine.generate({464, 3290, 318}, options);
    ASSERT_EQ(result.ids.size(), 3u);
    for (int id : result.ids) EXPECT_TRUE(id >= 0 && id < 50257) << id;
}

fs::path synthesize(const std::string& size) {
    testing::ensureGlContext();
    const fs::path dir = testing::makeTempDir("gpt2-synth-" + size);
    SyntheticWeights weights;
    weights.dtype = DType::F16;
    writeSyntheticCheckpoint(dir.string(), officialConfig(size), weights);
    return dir;
}

TEST(OfficialSizes, Synth124MAsAnF16GgufFileOfAbout250MBGenerates) {
    const fs::path dir = synthesize("124M");
    testing::linkGpt2Tokenizer(dir.string());
    const std::string gguf = (dir / "model.gguf").string();
    writeGguf(dir.string(), gguf, GgufFileType::F16);
    const auto bytes = fs::file_size(gguf);
    std::cout << "[ measured ] GGUF 124M F16: " << bytes << " bytes\n";
    EXPECT_GT(bytes, 240'000'000u);
    EXPECT_LT(bytes, 260'000'000u);
    expectGenerates(gguf);
    fs::remove_all(dir);
}

TEST(OfficialSizes, Synth355MLoadsFromItsFolderAndGenerates) {
    const fs::path dir = synthesize("355M");
    expectGenerates(dir.string());
    fs::remove_all(dir);
}

// The figures the demo's picker shows: every official size in each weight format, planned on this
// context without allocating anything. fp16 holds about half of fp32's weight bytes and int8 half
// of fp16's, and the activations and KV cache come on top of each.
TEST(OfficialSizes, PlannedGpuBytesOfEverySizeAndFormat) {
    testing::ensureGlContext();
    for (const char* size : {"124M", "355M", "774M", "1.5B"}) {
        std::int64_t fp32 = 0, fp16 = 0, int8 = 0;
        for (auto [format, bytes] : {std::pair{TexelFormat::Float32, &fp32}, std::pair{TexelFormat::Float16, &fp16},
                                     std::pair{TexelFormat::Int8Quads, &int8}})
            *bytes = Engine::plannedGpuBytes(officialConfig(size), ModelOptions{format, 0});
        std::cout << "[ measured ] " << size << " planned GPU bytes: fp32 " << fp32 << ", fp16 " << fp16 << ", int8 "
                  << int8 << "\n";
        EXPECT_GT(fp32, fp16);
        EXPECT_GT(fp16, int8);
        EXPECT_LT(double(fp16), 0.6 * double(fp32)) << size;
    }
}

// GPT-2 124M at 4 bits within 200 MB of GPU memory, as a phone needs it: int4 weights and an fp16
// K/V cache (a fp32 cache alone is 75.5 MB of its 1,024 positions).
TEST(OfficialSizes, Gpt2SmallAt4BitsWithAnFp16CacheFitsIn200MB) {
    testing::ensureGlContext();
    ModelOptions options{TexelFormat::Int4Quads, 0};
    const std::int64_t fp32Cache = Engine::plannedGpuBytes(officialConfig("124M"), options);
    options.kvCache = TexelFormat::Float16;
    const std::int64_t fp16Cache = Engine::plannedGpuBytes(officialConfig("124M"), options);
    std::cout << "[ measured ] 124M int4 planned GPU bytes: fp32 K/V " << fp32Cache << ", fp16 K/V " << fp16Cache
              << "\n";
    EXPECT_LE(fp16Cache, 200'000'000);
    EXPECT_EQ(fp32Cache - fp16Cache, std::int64_t(12) * 2 * 1024 * 768 * 2)
        << "2 bytes less per element of 12 layers' K and V";
}

// GPT-2 1.5B at 4 bits within 1.4 GB at its full 1,024 positions: its matrices as Q4_0 blocks and
// its token embedding as Q8_0 (llama.cpp's Q4_0 preset for 1,600-wide rows), an fp16 K/V cache.
TEST(OfficialSizes, Gpt2XlAt4BitsWithAnFp16CacheFitsIn1400MB) {
    testing::ensureGlContext();
    const ModelConfig config = officialConfig("1.5B");
    BlockFormats blocks;
    for (const MatrixSpec& spec : engineMatrices(config)) {
        if (spec.rows == 1 || spec.name == "wpe.weight") continue;
        const GgmlTypeInfo& t =
            *ggmlTypeInfo(std::uint32_t(spec.name == "wte.weight" ? GgmlType::Q8_0 : GgmlType::Q4_0));
        blocks[spec.name] = BlockFormat{t.codeBits, t.scaleValues, t.offsets, t.halfParams};
    }
    ModelOptions options{TexelFormat::Float16};
    options.kvCache = TexelFormat::Float16;
    const std::int64_t planned = Engine::plannedGpuBytes(config, options, blocks);
    std::cout << "[ measured ] 1.5B Q4_0 planned GPU bytes with an fp16 K/V cache: " << planned << "\n";
    EXPECT_LE(planned, 1'400'000'000);
}

}  // namespace
}  // namespace gpt2
