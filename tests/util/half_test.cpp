// holdsInHalf against its definition, roundToHalf(v) == v for a finite v (roundToHalf rounds as IEEE
// 754 does; tests/format/safetensors_test.cpp checks fp16's values themselves).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "util/half.h"

namespace gpt2 {
namespace {

bool reference(float v) { return std::isfinite(v) && roundToHalf(v) == v; }

float fromBits(std::uint32_t bits) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

TEST(Half, HoldsInHalfIsWhatRoundingThroughHalfKeeps) {
    // Every fp16 value, and the floats one step either side of it.
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const float v = halfToFloat(std::uint16_t(h));
        std::uint32_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        for (std::uint32_t near : {bits - 1, bits, bits + 1})
            EXPECT_EQ(holdsInHalf(fromBits(near)), reference(fromBits(near))) << "bits " << near;
    }
    // Floats across the whole range.
    for (std::uint64_t bits = 0; bits < (std::uint64_t(1) << 32); bits += 9973)
        ASSERT_EQ(holdsInHalf(fromBits(std::uint32_t(bits))), reference(fromBits(std::uint32_t(bits))))
            << "bits " << bits;
    EXPECT_FALSE(holdsInHalf(std::numeric_limits<float>::infinity()));
    EXPECT_FALSE(holdsInHalf(std::numeric_limits<float>::quiet_NaN()));
    EXPECT_TRUE(holdsInHalf(65504.0f));
    EXPECT_FALSE(holdsInHalf(65520.0f));
    EXPECT_TRUE(holdsInHalf(std::ldexp(1.0f, -24)));
    EXPECT_FALSE(holdsInHalf(std::ldexp(1.0f, -25)));
}

}  // namespace
}  // namespace gpt2
