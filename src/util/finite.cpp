#include "util/finite.h"

#include <cstring>

namespace gpt2 {

namespace {
// Lanes of 16 or 32 bits in a 64-bit word: one lane's exponent mask; in every lane, the exponent
// mask, the lowest bit, the highest bit.
struct Lanes {
    std::uint32_t exponent;
    std::uint64_t exponents, low, high;
    int bytes;
};
constexpr Lanes kHalves{0x7C00u, 0x7C007C007C007C00u, 0x0001000100010001u, 0x8000800080008000u, 2};
constexpr Lanes kFloats{0x7F800000u, 0x7F8000007F800000u, 0x0000000100000001u, 0x8000000080000000u, 4};

bool nonFinite(const std::uint8_t* value, const Lanes& lanes) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, value, std::size_t(lanes.bytes));
    return (bits & lanes.exponent) == lanes.exponent;
}
}  // namespace

std::int64_t firstNonFinite(const std::uint8_t* bytes, std::int64_t count, bool half) {
    const Lanes& lanes = half ? kHalves : kFloats;
    const std::int64_t perWord = 8 / lanes.bytes, words = count / perWord;
    std::int64_t i = 0;
    for (std::int64_t w = 0; w < words; ++w) {
        std::uint64_t word;
        std::memcpy(&word, bytes + 8 * w, 8);
        // A lane is 0 where its exponent is all ones; some lane is 0 exactly when this is not.
        const std::uint64_t t = (word & lanes.exponents) ^ lanes.exponents;
        if (((t - lanes.low) & ~t & lanes.high) != 0) {
            i = w * perWord;
            break;
        }
        i = (w + 1) * perWord;
    }
    for (; i < count; ++i)
        if (nonFinite(bytes + i * lanes.bytes, lanes)) return i;
    return -1;
}

}  // namespace gpt2
