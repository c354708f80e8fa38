// The CPU kernel that reads 8- and 4-bit blocks as stored (blockDot over Q8_0 and Q4_0 rows; the
// WebAssembly build's decode steps) against the dot product of the same rows decoded to floats by
// the format layer (decodeValues, which the GGUF fixtures check against llama.cpp), on random
// blocks of every fp16 scale that is finite.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "cpu/vector_math.h"
#include "format/ggml_type.h"

namespace gpt2 {
namespace {

template <class Block>
void expectDotOfDecodedRow(GgmlType type) {
    const GgmlTypeInfo& info = *ggmlTypeInfo(std::uint32_t(type));
    constexpr int kValues = 768, kRows = 200;
    std::mt19937 rng{std::uint32_t(type)};
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(kValues), decoded(kValues);
    for (float& v : x) v = normal(rng);
    std::vector<std::uint8_t> row(std::size_t(kValues / info.blockValues * info.blockBytes));
    for (int r = 0; r < kRows; ++r) {
        for (auto& b : row) b = std::uint8_t(rng());
        // Scales of moderate size, so that the products stay finite: fp16 exponents 5..24.
        for (std::size_t at = 0; at < row.size(); at += std::size_t(info.blockBytes))
            row[at + 1] = std::uint8_t((row[at + 1] & 0x83) | (5 + rng() % 20) << 2);
        decodeValues(type, row.data(), kValues, decoded.data());
        double want = 0.0, scale = 0.0;
        for (int i = 0; i < kValues; ++i) {
            want += double(decoded[std::size_t(i)]) * x[std::size_t(i)];
            scale += std::abs(double(decoded[std::size_t(i)]) * x[std::size_t(i)]);
        }
        // fp32 sums of 768 products: within 1e-6 of the sum of their magnitudes.
        EXPECT_NEAR(cpu::blockDot<Block>(row.data(), x.data(), kValues), want, 1e-6 * scale)
            << info.name << " row " << r;
    }
}

TEST(BlockDot, Q8_0RowsAsStoredGiveTheDotOfTheirDecodedValues) {
    expectDotOfDecodedRow<cpu::Q8_0Block>(GgmlType::Q8_0);
}

TEST(BlockDot, Q4_0RowsAsStoredGiveTheDotOfTheirDecodedValues) {
    expectDotOfDecodedRow<cpu::Q4_0Block>(GgmlType::Q4_0);
}

// Every integer a code or a fp16 conversion widens (|i| < 2^22) comes out as the float it is.
TEST(BlockDot, SmallIntegersWidenToTheirExactFloats) {
    for (int i = -(1 << 22) + 1; i < (1 << 22); i += 7) {
        const cpu::Floats4 f = cpu::smallIntsToFloats(cpu::Ints4{i, -i, i / 3, 0});
        ASSERT_EQ(f[0], float(i));
        ASSERT_EQ(f[1], float(-i));
        ASSERT_EQ(f[2], float(i / 3));
        ASSERT_EQ(f[3], 0.0f);
    }
}

}  // namespace
}  // namespace gpt2
