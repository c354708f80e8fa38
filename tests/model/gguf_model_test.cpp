// GGUF files made by llama.cpp (tests/fixtures/gguf/README.md), one per tensor type, against a float64
// forward over the same files' weights dequantized by llama.cpp's own gguf-py: the last position's
// logits, the greedy continuation, the tokenizer of the file's metadata against Hugging Face's ids,
// and quantized weights kept quantized on the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>

#include "engine/engine.h"
#include "engine/gpu_runner.h"
#include "format/gguf.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

using testing::fixturePath;
using testing::maxAbsDiff;

// Activations, KV cache and dequantized weights in fp32 against a float64 forward: the engine's
// error on these files is at most 1.9e-5 on llvmpipe (logits up to |46|), so 2e-4 leaves ten times
// that. llama.cpp's own logits differ by 0.006 (F32) to 0.5 (K-quants) on these random weights, as it
// quantizes activations inside its dot products: the tests report that and do not bound it.
constexpr float kLogitTolerance = 2e-4f;

nlohmann::json expected(const std::string& name) {
    return nlohmann::json::parse(readTextFile(fixturePath("gguf/" + name + ".json")));
}

// splitTexels > 0: split-K as on GPUs, so that decode steps run one-row matmuls whose vertex shader
// hands the input to the fragments; halfNibbles as ModelOptions::halfNibbles.
std::unique_ptr<Engine> load(const std::string& name, int splitTexels = -1, int halfNibbles = -1) {
    testing::ensureGlContext();
    ModelOptions options;
    options.weights = TexelFormat::Float32;  // for the float files; quantized tensors stay quantized
    options.halfPromptInputs = 0;
    options.splitTexels = splitTexels;
    options.halfNibbles = halfNibbles;
    return std::make_unique<Engine>(fixturePath("gguf/" + name + ".gguf"), options);
}

class GgufFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufFixture, LastLogitsMatchTheFloat64Forward) {
    auto engine = load(GetParam());
    const nlohmann::json fixture = expected(GetParam());
    ASSERT_EQ(fixture["prompts"].size(), GetParam() == "tiny-Q8_0" ? 1u : 2u);
    for (const auto& prompt : fixture["prompts"]) {
        engine->prefill(prompt["ids"].get<std::vector<int>>());
        const std::vector<float> logits = engine->logits();
        const float diff = maxAbsDiff(logits, prompt["reference_last_logits"].get<std::vector<float>>());
        EXPECT_LE(diff, kLogitTolerance) << GetParam() << " prompt " << prompt["ids"].dump();
        const float llama = maxAbsDiff(logits, prompt["llama_cpp_last_logits"].get<std::vector<float>>());
        RecordProperty("max_abs_diff_vs_llama_cpp", std::to_string(llama));
        std::cout << GetParam() << ": max |dlogit| " << diff << " against the float64 forward, " << llama
                  << " against llama.cpp\n";
    }
}

TEST_P(GgufFixture, GreedyContinuationMatchesTheFloat64Forward) {
    auto engine = load(GetParam());
    const nlohmann::json fixture = expected(GetParam());
    ASSERT_FALSE(fixture["prompts"].empty());
    for (const auto& prompt : fixture["prompts"]) {
        const auto want = prompt["reference_greedy"].get<std::vector<int>>();
        const auto margins = prompt["reference_greedy_margins"].get<std::vector<float>>();
        GenerateOptions options;
        options.maxNewTokens = int(want.size());
        options.stopAtEndOfText = false;
        Generation generation(*engine, prompt["ids"].get<std::vector<int>>(), options);
        std::vector<int> got;
        while (auto token = generation.next()) got.push_back(token->id);
        ASSERT_EQ(got.size(), want.size());
        // Compared up to the first step whose top two logits are too close to tell apart.
        std::size_t compared = 0;
        while (compared < want.size() && margins[compared] > 2 * kLogitTolerance) ++compared;
        EXPECT_GE(compared, 2u) << "the fixture's margins leave too little to compare";
        for (std::size_t i = 0; i < compared; ++i) EXPECT_EQ(got[i], want[i]) << GetParam() << " step " << i;
    }
}

// The last position as a decode step after the rest of the prompt, through the one-row matmuls: 16
// input texels per instance (as GPUs run int8 and 4-bit weights; every instance starts a block of
// codes) and 2 (instances start inside blocks of 8 or 4 texels); 4-bit codes unpacked as halves, as
// GPUs do, and by integer conversions.
TEST_P(GgufFixture, DecodeStepsSplitOverInputTexelsMatchTheFloat64Forward) {
    const nlohmann::json fixture = expected(GetParam());
    for (const auto& [split, halfNibbles] : {std::pair{16, 1}, std::pair{16, 0}, std::pair{2, 1}}) {
        auto engine = load(GetParam(), split, halfNibbles);
        for (const auto& prompt : fixture["prompts"]) {
            const auto ids = prompt["ids"].get<std::vector<int>>();
            engine->prefill(std::vector<int>(ids.begin(), ids.end() - 1));
            engine->step(ids.back());
            EXPECT_LE(maxAbsDiff(engine->logits(), prompt["reference_last_logits"].get<std::vector<float>>()),
                      kLogitTolerance)
                << GetParam() << " split " << split << " halfNibbles " << halfNibbles << " prompt "
                << prompt["ids"].dump();
        }
    }
}

// Every quantized matrix is read from codes of its type's width (4-bit types 4 bits, the others 8),
// never from a widened copy.
TEST_P(GgufFixture, QuantizedTensorsStayQuantizedOnTheGpu) {
    auto engine = load(GetParam());
    const GgufFile file(fixturePath("gguf/" + GetParam() + ".gguf"));
    const std::map<std::string, std::string> hfNames = {{"token_embd.weight", "wte.weight"},
                                                        {"blk.0.attn_qkv.weight", "h.0.attn.c_attn.weight"},
                                                        {"blk.1.ffn_down.weight", "h.1.mlp.c_proj.weight"}};
    for (const auto& [gguf, hf] : hfNames) {
        const GgufTensor& tensor = *file.header().tensor(gguf);
        const GgmlTypeInfo& info = *ggmlTypeInfo(std::uint32_t(tensor.type));
        const WeightMatrix m = dynamic_cast<GpuRunner&>(engine->runner()).weights().matrix(hf);
        const TexelFormat want = info.blockValues == 1 ? TexelFormat::Float32
                                 : info.codeBits == 4  ? TexelFormat::Int4Quads
                                                       : TexelFormat::Int8Quads;
        EXPECT_EQ(int(m.values->format()), int(want)) << gguf << " is " << info.name;
        EXPECT_EQ(m.blockTexels * 4, info.blockValues == 1 ? 0 : info.scaleValues) << gguf;
        EXPECT_EQ(m.offsets != nullptr, info.offsets) << gguf;
    }
}

INSTANTIATE_TEST_SUITE_P(LlamaCppFiles, GgufFixture, ::testing::ValuesIn(testing::ggufFixtures()),
                         [](const auto& info) { return testing::testName(info.param); });

TEST(GgufTokenizer, MetadataTokenizerGivesHuggingFaceIds) {
    const Tokenizer tokenizer = fileTokenizer(ModelFileReader(fixturePath("gguf/tiny-Q8_0.gguf")).header());
    const auto cases = nlohmann::json::parse(readTextFile(fixturePath("tokenizer/cases.json")));
    int checked = 0;
    for (const auto& c : cases) {
        EXPECT_EQ(tokenizer.encode(c["text"].get<std::string>()), c["ids"].get<std::vector<int>>()) << c["text"];
        ++checked;
    }
    EXPECT_GT(checked, 100);
    // llama.cpp's own ids for the fixture's prompt are Hugging Face's too.
    const nlohmann::json fixture = expected("tiny-Q8_0");
    const auto& prompt = fixture["prompts"][0];
    EXPECT_EQ(tokenizer.encode(prompt["text"].get<std::string>()), prompt["llama_cpp_ids"].get<std::vector<int>>());
}

TEST(GgufModel, ConfigComesFromTheMetadata) {
    auto engine = load("wide-Q4_K_M");
    const ModelConfig& c = engine->config();
    EXPECT_EQ(c.vocabSize, 512);
    EXPECT_EQ(c.embedDim, 256);
    EXPECT_EQ(c.layers, 2);
    EXPECT_EQ(c.heads, 4);
    EXPECT_EQ(c.innerDim, 512);
    EXPECT_EQ(c.contextLength, 32);
    EXPECT_TRUE(c.tieWordEmbeddings);
    EXPECT_TRUE(engine->hasTokenizer());
}

// Whole blocks in a consistent container, but not the shape the metadata gives (64 x 256 read as
// 128 x 128, the same bytes): the load names the tensor and both shapes.
TEST(GgufModel, TensorShapeThatDisagreesWithTheMetadataFailsTheLoad) {
    testing::ensureGlContext();
    auto bytes = readFile(fixturePath("gguf/narrow-F32.gguf"));
    const std::string name = "blk.0.ffn_up.weight";
    const auto at = std::search(bytes.begin(), bytes.end(), name.begin(), name.end()) - bytes.begin();
    const std::uint64_t dims[2] = {128, 128};
    std::memcpy(bytes.data() + at + name.size() + 4, dims, sizeof dims);
    const std::string path = testing::makeTempDir("gguf-shape") + "/model.gguf";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    try {
        Engine engine(path, ModelOptions{});
        FAIL() << "the load succeeded";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(
                      "tensor blk.0.ffn_up.weight has shape [128, 128], expected [64, 256] from the gpt2.* metadata"),
                  std::string::npos)
            << e.what();
    }
}

// A block whose fp16 scale is Inf or NaN (bits a file can hold, which no quantizer writes) fails the
// load, naming the tensor, the block and the output channel: fp16 scales (Q4_0) are checked as bits.
TEST(GgufModel, ABlockScaleThatIsNotFiniteFailsTheLoad) {
    testing::ensureGlContext();
    auto bytes = readFile(fixturePath("gguf/narrow-Q4_0.gguf"));
    const auto header = parseGgufHeader(bytes.data(), bytes.size(), bytes.size(), "narrow-Q4_0.gguf");
    ASSERT_TRUE(header);
    const GgufTensor& tensor = *header->tensor("blk.1.ffn_down.weight");
    ASSERT_EQ(tensor.type, GgmlType::Q4_0);
    // Block 2 of row 5: its d, the first two bytes of its 18.
    const std::int64_t blocksPerRow = tensor.dims[0] / 32;
    const std::uint64_t at = header->dataOffset + tensor.begin + std::uint64_t(5 * blocksPerRow + 2) * 18;
    for (const std::uint16_t bits : {std::uint16_t(0x7C00), std::uint16_t(0xFE01)}) {
        std::memcpy(bytes.data() + at, &bits, 2);
        const std::string path = testing::makeTempDir("gguf-scale") + "/model.gguf";
        std::ofstream(path, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
        try {
            Engine engine(path, ModelOptions{});
            FAIL() << "the load succeeded with a scale of bits " << bits;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("tensor h.1.mlp.c_proj.weight holds a scale of "), std::string::npos)
                << e.what();
            EXPECT_NE(std::string(e.what()).find(" in block 2 of output channel 5; the file is corrupt"),
                      std::string::npos)
                << e.what();
        }
    }
}

}  // namespace
}  // namespace gpt2
