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
#include "util/finite.h"
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

// firstNonFinite reads eight bytes at a time: an Inf or NaN in any lane of a word, or in the tail
// past the last word, from any start address, is found at its index, and only those are. The
// reference is IEEE 754's rule: the exponent bits all ones.
TEST(Safetensors, FirstNonFiniteFindsEveryInfAndNanAtItsIndex) {
    struct Width {
        bool half;
        int bytes;
        std::vector<std::uint32_t> finite, bad;
    };
    const Width widths[] = {
        {true, 2, {0x0000, 0x8000, 0x03FF, 0x3C00, 0x7BFF, 0xFBFF, 0x7800}, {0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFFFF}},
        {false,
         4,
         {0x00000000, 0x80000000, 0x007FFFFF, 0x3F800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000},
         {0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF}},
    };
    for (const Width& w : widths) {
        for (int count = 1; count <= 13; ++count) {
            for (int at = -1; at < count; ++at) {
                for (const std::uint32_t bad : w.bad) {
                    // One byte in, so that the words are unaligned.
                    std::vector<std::uint8_t> bytes(1 + std::size_t(count) * std::size_t(w.bytes));
                    for (int i = 0; i < count; ++i) {
                        const std::uint32_t v = i == at ? bad : w.finite[std::size_t(i) % w.finite.size()];
                        std::memcpy(bytes.data() + 1 + i * w.bytes, &v, std::size_t(w.bytes));
                    }
                    if (at >= 0 && at + 2 < count)  // a later one does not hide the first
                        std::memcpy(bytes.data() + 1 + (at + 2) * w.bytes, &bad, std::size_t(w.bytes));
                    ASSERT_EQ(firstNonFinite(bytes.data() + 1, count, w.half), at)
                        << (w.half ? "fp16" : "fp32") << " count " << count << " bad " << bad;
                }
            }
        }
    }
    // Every fp16 pattern alone: non-finite exactly when its exponent is 31.
    for (std::uint32_t bits = 0; bits < 65536; ++bits) {
        const std::uint8_t value[2] = {std::uint8_t(bits), std::uint8_t(bits >> 8)};
        ASSERT_EQ(firstNonFinite(value, 1, true), (bits >> 10 & 31) == 31 ? 0 : -1) << bits;
    }
}

}  // namespace
}  // namespace gpt2
