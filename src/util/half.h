#pragma once
// fp16 / bf16 conversion. GLM's packHalf handles rounding, subnormals, Inf and NaN.
#include <cstdint>
#include <cstring>
#include <glm/gtc/packing.hpp>

namespace gpt2 {

inline std::uint16_t floatToHalf(float value) { return glm::packHalf1x16(value); }
inline float halfToFloat(std::uint16_t bits) { return glm::unpackHalf1x16(bits); }

inline float bf16ToFloat(std::uint16_t bits) {
    const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &wide, sizeof value);
    return value;
}

// Rounds through fp16 and back: what a weight becomes once stored in an RGBA16F texture.
inline float roundToHalf(float value) { return halfToFloat(floatToHalf(value)); }

}  // namespace gpt2
