// The fp16 scales of the types whose scales are fp16 values (decodeHalfScales, which a GGUF load
// uses) against the float decoder's (decodeScales, which the llama.cpp fixtures check), on random
// blocks: every exponent of d, subnormal, overflowing (Q4_0's -8d) and Inf or NaN included.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "format/ggml_type.h"
#include "util/half.h"

namespace gpt2 {
namespace {

// Every one of the 65,536 halves against its value as IEEE 754 defines it: (-1)^s 2^(e-15) 1.m, or
// 2^-14 0.m for e = 0; e = 31 is Inf (m = 0) or NaN.
TEST(Half, EveryHalfBecomesTheFloatOfItsValue) {
    int differ = 0;
    for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
        const int e = int(bits >> 10) & 31, m = int(bits & 1023);
        const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
        const float got = halfToFloat(std::uint16_t(bits));
        bool same;
        if (e == 31)
            same = m == 0 ? std::isinf(got) && std::signbit(got) == (sign < 0) : std::isnan(got);
        else {
            const double want = sign * (e == 0 ? std::ldexp(double(m), -24) : std::ldexp(double(1024 + m), e - 25));
            same = double(got) == want && std::signbit(got) == (sign < 0);
        }
        if (!same && ++differ <= 5) ADD_FAILURE() << "half bits " << bits << " became " << got;
    }
    EXPECT_EQ(differ, 0);
}

TEST(GgmlType, Fp16ScalesAreTheFloatDecodersBitForBit) {
    for (const GgmlType type : {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1}) {
        const GgmlTypeInfo& info = *ggmlTypeInfo(std::uint32_t(type));
        constexpr int kBlocks = 4096;
        std::mt19937 rng{std::uint32_t(type)};
        std::vector<std::uint8_t> bytes(std::size_t(kBlocks) * info.blockBytes);
        for (auto& b : bytes) b = std::uint8_t(rng());
        const std::int64_t count = std::int64_t(kBlocks) * info.blockValues;
        std::vector<float> scales(kBlocks), offsets(kBlocks);
        std::vector<std::uint16_t> halfScales(kBlocks), halfOffsets(kBlocks);
        decodeScales(type, bytes.data(), count, scales.data(), info.offsets ? offsets.data() : nullptr, 1);
        decodeHalfScales(type, bytes.data(), count, halfScales.data(), info.offsets ? halfOffsets.data() : nullptr, 1);
        int differ = 0;
        const auto expectSame = [&](float want, std::uint16_t got, const char* what, int block) {
            const bool same = std::isnan(want) ? std::isnan(halfToFloat(got)) : got == floatToHalf(want);
            if (!same && ++differ <= 5)
                ADD_FAILURE() << info.name << " block " << block << ": " << what << " " << want << " became bits "
                              << got;
        };
        for (int b = 0; b < kBlocks; ++b) {
            expectSame(scales[std::size_t(b)], halfScales[std::size_t(b)], "scale", b);
            if (info.offsets) expectSame(offsets[std::size_t(b)], halfOffsets[std::size_t(b)], "offset", b);
        }
        EXPECT_EQ(differ, 0) << info.name;
    }
}

}  // namespace
}  // namespace gpt2
