// The GGUF reader against llama.cpp's files, whole and broken (docs/bad-inputs.md): each broken file
// is a fixture with a few bytes changed, and fails with a message that names what is wrong, never a
// crash or an out-of-bounds read (the sanitizer build runs these too).
#include <gtest/gtest.h>

#include <cstring>

#include "format/gguf.h"
#include "format/gguf_gpt2.h"
#include "format/model_file.h"
#include "support/fixture.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

std::vector<std::uint8_t> fixture(const std::string& name) { return readFile(testing::fixturePath("gguf/" + name)); }

GgufHeader parse(const std::vector<std::uint8_t>& bytes, std::uint64_t fileSize) {
    auto header = parseGgufHeader(bytes.data(), bytes.size(), fileSize, "test.gguf");
    if (!header) throw std::runtime_error("the header was incomplete");
    return *header;
}
GgufHeader parse(const std::vector<std::uint8_t>& bytes) { return parse(bytes, bytes.size()); }

// Where `text` first occurs (a key, or a tensor's name), just past its 8-byte length.
std::size_t find(const std::vector<std::uint8_t>& bytes, const std::string& text) {
    for (std::size_t i = 8; i + text.size() <= bytes.size(); ++i)
        if (std::memcmp(bytes.data() + i, text.data(), text.size()) == 0) return i;
    throw std::runtime_error(text + " is not in the file");
}

template <typename T>
void put(std::vector<std::uint8_t>& bytes, std::size_t at, T value) {
    std::memcpy(bytes.data() + at, &value, sizeof value);
}

// The error that reading the file as a model (its header, then GPT-2's config and tensors from it)
// throws; "" if none.
std::string errorOf(const std::vector<std::uint8_t>& bytes, std::uint64_t fileSize) {
    try {
        parse(bytes, fileSize);
        if (!parseModelFileHeader(bytes.data(), bytes.size(), fileSize, "test.gguf"))
            throw std::runtime_error("the header was incomplete");
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}
std::string errorOf(const std::vector<std::uint8_t>& bytes) { return errorOf(bytes, bytes.size()); }

TEST(Gguf, ReadsLlamaCppFile) {
    const GgufHeader h = parse(fixture("wide-Q4_K_M.gguf"));
    EXPECT_EQ(h.version, 3u);
    EXPECT_EQ(h.text("general.architecture"), "gpt2");
    EXPECT_EQ(h.strings("tokenizer.ggml.tokens").size(), 512u);
    EXPECT_EQ(h.tensors.size(), 4u + 2 * 12);
    const GgufTensor* embedding = h.tensor("token_embd.weight");
    ASSERT_NE(embedding, nullptr);
    EXPECT_EQ(embedding->type, GgmlType::Q6_K);
    EXPECT_EQ(embedding->dims, (std::vector<std::int64_t>{256, 512}));
    EXPECT_EQ(embedding->end - embedding->begin, 512u * 210u);  // 512 rows of one 210-byte Q6_K block
    EXPECT_EQ(h.tensor("blk.0.ffn_up.weight")->type, GgmlType::Q4_K);
    EXPECT_EQ(h.dataOffset % 32, 0u);
}

TEST(Gguf, AsksForMoreBytesWhileThePrefixEndsInsideTheHeader) {
    const auto bytes = fixture("narrow-Q4_0.gguf");
    const GgufHeader whole = parse(bytes);
    for (std::size_t cut : {std::size_t(3), std::size_t(100), std::size_t(whole.dataOffset - 40)}) {
        const std::vector<std::uint8_t> prefix(bytes.begin(), bytes.begin() + std::ptrdiff_t(cut));
        EXPECT_FALSE(parseGgufHeader(prefix.data(), prefix.size(), bytes.size(), "test.gguf").has_value()) << cut;
    }
    const std::vector<std::uint8_t> header(bytes.begin(), bytes.begin() + std::ptrdiff_t(whole.dataOffset));
    EXPECT_TRUE(parseGgufHeader(header.data(), header.size(), bytes.size(), "test.gguf").has_value());
}

TEST(GgufBadInputs, TruncatedFile) {
    const auto bytes = fixture("narrow-Q4_0.gguf");
    // Cut inside the header: the file ends there.
    std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + 5000);
    EXPECT_NE(errorOf(cut).find("the file is truncated or corrupt"), std::string::npos) << errorOf(cut);
    // Cut inside the data: a tensor runs past the end.
    cut.assign(bytes.begin(), bytes.end() - 100);
    EXPECT_NE(errorOf(cut).find("past the end of the"), std::string::npos) << errorOf(cut);
    EXPECT_NE(errorOf({'G', 'G'}).find("too short for a GGUF header"), std::string::npos);
}

TEST(GgufBadInputs, NotGguf) {
    std::vector<std::uint8_t> bytes = fixture("narrow-Q4_0.gguf");
    bytes[0] = 'X';
    EXPECT_NE(errorOf(bytes).find("not a GGUF file"), std::string::npos);
    bytes = fixture("narrow-Q4_0.gguf");
    put<std::uint32_t>(bytes, 4, 1);
    EXPECT_NE(errorOf(bytes).find("version 1"), std::string::npos);
}

// The type field of a tensor's description: after its name, dimension count and dimensions.
std::size_t typeField(const std::vector<std::uint8_t>& bytes, const std::string& tensor, int dims = 2) {
    return find(bytes, tensor) + tensor.size() + 4 + 8 * std::size_t(dims);
}

TEST(GgufBadInputs, UnknownTensorType) {
    auto bytes = fixture("narrow-Q4_0.gguf");
    put<std::uint32_t>(bytes, typeField(bytes, "blk.0.ffn_up.weight"), 16);  // IQ2_XXS
    const std::string e = errorOf(bytes);
    EXPECT_NE(e.find("blk.0.ffn_up.weight"), std::string::npos) << e;
    EXPECT_NE(e.find("IQ2_XXS"), std::string::npos) << e;
    EXPECT_NE(e.find("supported types are F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K"),
              std::string::npos)
        << e;
    put<std::uint32_t>(bytes, typeField(bytes, "blk.0.ffn_up.weight"), 999);
    EXPECT_NE(errorOf(bytes).find("type 999"), std::string::npos) << errorOf(bytes);
}

TEST(GgufBadInputs, TensorSizeDisagreesWithItsType) {
    // Q4_0 -> Q8_0: the same values take more bytes, which overlap the next tensor or run past the end.
    auto bytes = fixture("narrow-Q4_0.gguf");
    put<std::uint32_t>(bytes, typeField(bytes, "blk.0.ffn_up.weight"), 8);
    EXPECT_NE(errorOf(bytes).find("overlap"), std::string::npos) << errorOf(bytes);
    // A row that is not whole blocks.
    bytes = fixture("narrow-Q4_0.gguf");
    put<std::uint64_t>(bytes, find(bytes, "blk.0.ffn_up.weight") + 19 + 4, 40);
    EXPECT_NE(errorOf(bytes).find("not whole Q4_0 blocks of 32"), std::string::npos) << errorOf(bytes);
}

TEST(GgufBadInputs, TensorOffsetsThatWrapAroundOrMisalign) {
    auto bytes = fixture("narrow-Q4_0.gguf");
    const std::size_t offset = typeField(bytes, "blk.0.ffn_up.weight") + 4;
    put<std::uint64_t>(bytes, offset, ~std::uint64_t(0) - 255);  // begin + size would wrap past 2^64
    EXPECT_NE(errorOf(bytes).find("past the end of the"), std::string::npos) << errorOf(bytes);
    put<std::uint64_t>(bytes, offset, 33);
    EXPECT_NE(errorOf(bytes).find("not a multiple of the alignment 32"), std::string::npos) << errorOf(bytes);
}

TEST(GgufBadInputs, MissingTensor) {
    auto bytes = fixture("narrow-Q4_0.gguf");
    bytes[find(bytes, "blk.1.ffn_up.weight") + 9] = 'X';  // blk.1.ffn_Xp.weight
    const std::string e = errorOf(bytes);
    EXPECT_NE(e.find("blk.1.ffn_up.weight"), std::string::npos) << e;
    EXPECT_NE(e.find("is missing"), std::string::npos) << e;
}

TEST(GgufBadInputs, TensorNamedTwice) {
    auto bytes = fixture("narrow-Q4_0.gguf");
    bytes[find(bytes, "blk.0.ffn_up.weight") + 4] = '1';  // now a second blk.1.ffn_up.weight
    EXPECT_NE(errorOf(bytes).find("tensor blk.1.ffn_up.weight appears twice"), std::string::npos) << errorOf(bytes);
}

TEST(GgufBadInputs, WrongArchitecture) {
    auto bytes = fixture("narrow-Q4_0.gguf");
    const std::size_t value = find(bytes, "general.architecture") + 20 + 4 + 8;
    std::memcpy(bytes.data() + value, "llam", 4);
    const std::string e = errorOf(bytes);
    EXPECT_NE(e.find("general.architecture is \"llam\""), std::string::npos) << e;
}

TEST(GgufBadInputs, MetadataThatLiesAboutCounts) {
    auto bytes = fixture("narrow-Q4_0.gguf");
    put<std::uint64_t>(bytes, 16, std::uint64_t(1) << 40);  // metadata count
    EXPECT_NE(errorOf(bytes).find("the metadata count says"), std::string::npos) << errorOf(bytes);
    bytes = fixture("narrow-Q4_0.gguf");
    put<std::uint64_t>(bytes, 8, 1000000);  // tensor count
    EXPECT_NE(errorOf(bytes).find("the tensor count says"), std::string::npos) << errorOf(bytes);
    bytes = fixture("narrow-Q4_0.gguf");
    // tokenizer.ggml.tokens: key, value type ARRAY, element type STRING, then the count.
    put<std::uint64_t>(bytes, find(bytes, "tokenizer.ggml.tokens") + 21 + 4 + 4, std::uint64_t(1) << 60);
    EXPECT_NE(errorOf(bytes).find("tokenizer.ggml.tokens's array length says"), std::string::npos) << errorOf(bytes);
    bytes = fixture("narrow-Q4_0.gguf");
    put<std::uint32_t>(bytes, find(bytes, "blk.0.ffn_up.weight") + 19, 7);  // dimension count
    EXPECT_NE(errorOf(bytes).find("has 7 dimensions"), std::string::npos) << errorOf(bytes);
}

TEST(GgufBadInputs, StringLengthPastTheEndOfTheFile) {
    auto bytes = fixture("narrow-Q4_0.gguf");
    put<std::uint64_t>(bytes, find(bytes, "general.architecture") + 20 + 4, std::uint64_t(1) << 50);
    EXPECT_NE(errorOf(bytes).find("a metadata string's length says"), std::string::npos) << errorOf(bytes);
    bytes = fixture("narrow-Q4_0.gguf");
    put<std::uint64_t>(bytes, find(bytes, "general.architecture") - 8, ~std::uint64_t(0));  // the key's length
    EXPECT_NE(errorOf(bytes).find("a metadata key's length"), std::string::npos) << errorOf(bytes);
}

TEST(GgufBadInputs, EveryPrefixOfAFileFailsCleanly) {
    // Whatever the cut, a clean error (or a request for more bytes while the header is incomplete).
    const auto bytes = fixture("narrow-Q4_0.gguf");
    for (std::size_t cut = 0; cut < bytes.size(); cut += 997) {
        const std::vector<std::uint8_t> prefix(bytes.begin(), bytes.begin() + std::ptrdiff_t(cut));
        EXPECT_NE(errorOf(prefix), "") << cut;
    }
}

}  // namespace
}  // namespace gpt2
