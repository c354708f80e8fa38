#include "util/half.h"

#include <array>

namespace gpt2 {

void halvesToFloats(const std::uint8_t* bytes, std::size_t count, float* out) {
    // Every fp16 value's float, made once: a lookup per value where converting one takes a dozen
    // operations, which a model's hundreds of millions of weights make seconds in wasm.
    static const std::array<float, 65536> table = [] {
        std::array<float, 65536> t{};
        for (std::uint32_t bits = 0; bits < t.size(); ++bits) t[bits] = halfToFloat(std::uint16_t(bits));
        return t;
    }();
    for (std::size_t i = 0; i < count; ++i) out[i] = table[std::size_t(bytes[2 * i] | bytes[2 * i + 1] << 8)];
}

}  // namespace gpt2
