// The safetensors reader accepts well-formed files and rejects every malformed one with a message
// that names the file and what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "format/safetensors.h"
#include "format/safetensors_writer.h"
#include "support/fixture.h"
#include "util/error.h"
#include "util/half.h"

namespace gpt2 {
namespace {

std::vector<std::uint8_t> fileWith(const std::string& header, std::size_t dataBytes) {
    std::vector<std::uint8_t> bytes(8 + header.size() + dataBytes, 0);
    const std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) bytes[std::size_t(i)] = std::uint8_t(n >> (8 * i));
    std::copy(header.begin(), header.end(), bytes.begin() + 8);
    return bytes;
}

SafetensorsHeader parse(const std::vector<std::uint8_t>& bytes) {
    return parseSafetensorsHeader(bytes.data(), bytes.size(), bytes.size(), "test.safetensors");
}

void expectError(const std::vector<std::uint8_t>& bytes, const std::string& fragment) {
    try {
        parse(bytes);
        FAIL() << "expected an error containing \"" << fragment << "\"";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("test.safetensors"), std::string::npos) << e.what();
    }
}

TEST(Safetensors, ParsesTensorsAndMetadata) {
    const auto bytes =
        fileWith(R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                 R"("b":{"dtype":"F16","shape":[4],"data_offsets":[24,32]}})",
                 32);
    const auto header = parse(bytes);
    ASSERT_EQ(header.tensors.size(), 2u);
    EXPECT_EQ(header.tensor("a").shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(header.tensor("b").dtype, DType::F16);
    EXPECT_EQ(header.metadata.at("format"), "pt");
    EXPECT_EQ(header.dataOffset, bytes.size() - 32);
}

TEST(Safetensors, RejectsFileShorterThanHeaderLength) { expectError({1, 2, 3}, "too short"); }

TEST(Safetensors, RejectsHeaderLengthBeyondFile) {
    auto bytes = fileWith(R"({})", 0);
    bytes[0] = 200;
    expectError(bytes, "runs past the end");
}

TEST(Safetensors, RejectsInvalidJson) { expectError(fileWith("{not json", 0), "not valid JSON"); }

TEST(Safetensors, RejectsUnknownDtype) {
    expectError(fileWith(R"({"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", 8), "dtype I64");
}

TEST(Safetensors, RejectsOffsetsBeyondData) {
    expectError(fileWith(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8), "truncated");
}

TEST(Safetensors, RejectsByteCountThatDisagreesWithShape) {
    expectError(fileWith(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", 16), "needs 12 bytes");
}

TEST(Safetensors, RejectsOverlappingTensors) {
    expectError(fileWith(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                         R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})",
                         24),
                "overlap");
}

TEST(Safetensors, RejectsNegativeDimension) {
    expectError(fileWith(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4), "negative");
}

TEST(Safetensors, RejectsReversedOffsets) {
    expectError(fileWith(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", 8), "spans bytes");
}

TEST(Safetensors, ReadsAndWritesInt8) {
    const std::string dir = testing::makeTempDir("gpt2-safetensors-i8"), path = dir + "/i8.safetensors";
    writeSafetensors(path, {{"q", DType::I8, {2, 3}}},
                     [](std::size_t) { return std::vector<float>{-128, -1, 0, 1, 2, 127}; });
    const SafetensorsFile file(path);
    const TensorInfo& q = file.header().tensor("q");
    EXPECT_EQ(q.dtype, DType::I8);
    EXPECT_EQ(q.end - q.begin, 6u);
    EXPECT_EQ(file.readFloats(q), (std::vector<float>{-128, -1, 0, 1, 2, 127}));
    for (float bad : {128.0f, 0.5f, NAN}) {
        try {
            writeSafetensors(path, {{"q", DType::I8, {1}}}, [&](std::size_t) { return std::vector<float>{bad}; });
            ADD_FAILURE() << bad << " written as I8";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("tensor q is I8 but value 0 is"), std::string::npos) << e.what();
        }
    }
    std::filesystem::remove_all(dir);
}

TEST(Safetensors, ConvertsHalfAndBfloat16) {
    const float values[] = {1.5f, -2.25f, -1024.0f, 0.0f};
    std::vector<std::uint8_t> f16, bf16;
    for (float v : values) {
        const std::uint16_t h = floatToHalf(v);
        f16.push_back(std::uint8_t(h));
        f16.push_back(std::uint8_t(h >> 8));
        std::uint32_t bits;
        std::memcpy(&bits, &v, 4);
        bf16.push_back(std::uint8_t(bits >> 16));
        bf16.push_back(std::uint8_t(bits >> 24));
    }
    float out[4];
    convertToFloat(DType::F16, f16.data(), 4, out);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], values[i]);
    convertToFloat(DType::BF16, bf16.data(), 4, out);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], values[i]);  // all four are exact in bf16
}

// Every fp16 bit pattern, through convertToFloat's table, against IEEE 754's definition of it:
// (-1)^s 2^-24 m for subnormals, (-1)^s 2^(e-25) (1024 + m) for normals, Inf and NaN for e = 31.
TEST(Safetensors, EveryF16BitPatternConvertsToItsValue) {
    std::vector<std::uint8_t> bytes;
    for (std::uint32_t bits = 0; bits < 65536; ++bits) {
        bytes.push_back(std::uint8_t(bits));
        bytes.push_back(std::uint8_t(bits >> 8));
    }
    std::vector<float> out(65536);
    convertToFloat(DType::F16, bytes.data(), out.size(), out.data());
    int wrong = 0;
    for (std::uint32_t bits = 0; bits < 65536; ++bits) {
        const int e = int(bits >> 10 & 31), m = int(bits & 1023);
        const double sign = bits & 0x8000 ? -1.0 : 1.0;
        const float got = out[bits];
        const bool ok = e == 31 ? (m == 0 ? got == float(sign * INFINITY) : std::isnan(got))
                                : got == float(sign * (e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25))) &&
                                      std::signbit(got) == bool(bits & 0x8000);
        if (!ok && ++wrong <= 3) ADD_FAILURE() << "fp16 bits " << bits << " became " << got;
    }
    EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace gpt2
