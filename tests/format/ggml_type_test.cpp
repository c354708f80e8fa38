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
