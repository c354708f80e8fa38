#pragma once
// fp16 / bf16 conversion: to fp16 rounding to nearest even, from it exactly (subnormals, Inf and NaN
// included both ways).
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gpt2 {

// Rounds to nearest, ties to even, as IEEE 754 and ggml's fp32 -> fp16 conversion do (GLM's packHalf
// rounds some halfway values up): GGUF files this project writes match llama.cpp's bit for bit.
inline std::uint16_t floatToHalf(float value) {
    std::uint32_t x;
    std::memcpy(&x, &value, sizeof x);
    const std::uint32_t sign = (x >> 16) & 0x8000u, mantissa = x & 0x7FFFFFu;
    const int exponent = int((x >> 23) & 0xFFu);
    if (exponent == 0xFF) return std::uint16_t(sign | 0x7C00u | (mantissa ? 0x200u : 0u));  // Inf, NaN
    const int e = exponent - 127 + 15;
    if (e >= 31) return std::uint16_t(sign | 0x7C00u);  // too large: Inf
    // Normal: 10 of the 23 mantissa bits stay; subnormal: the significand shifts right further.
    const int shift = e > 0 ? 13 : 14 - e;
    if (shift > 24) return std::uint16_t(sign);
    const std::uint32_t significand = e > 0 ? mantissa : (mantissa | 0x800000u);
    std::uint32_t half = (e > 0 ? std::uint32_t(e) << 10 : 0u) | (significand >> shift);
    const std::uint32_t rest = significand & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;  // a carry may reach Inf, as it should
    return std::uint16_t(sign | half);
}
// The half's exponent and mantissa moved into a float's place and scaled by 2^112 (the difference of
// the exponent biases): one multiply, exact for every finite half, subnormals included (the CPU
// backend converts a scale per block of 32 weights, and GLM's branchy conversion was a tenth of its
// time in WebAssembly). Inf and NaN get a float's all-ones exponent, NaN keeping its payload.
inline float halfToFloat(std::uint16_t bits) {
    const std::uint32_t magnitude = std::uint32_t(bits & 0x7FFFu) << 13;
    float value;
    std::memcpy(&value, &magnitude, sizeof value);
    value *= 0x1p112f;
    std::uint32_t out;
    std::memcpy(&out, &value, sizeof out);
    if ((bits & 0x7C00u) == 0x7C00u) out |= 0x7F800000u;
    out |= std::uint32_t(bits & 0x8000u) << 16;
    std::memcpy(&value, &out, sizeof value);
    return value;
}
// `count` fp16 values, little-endian bytes, as floats (exactly: every fp16 value is a float).
void halvesToFloats(const std::uint8_t* bytes, std::size_t count, float* out);

inline float bf16ToFloat(std::uint16_t bits) {
    const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &wide, sizeof value);
    return value;
}

// Rounds through fp16 and back: what a weight becomes once stored in an RGBA16F texture.
inline float roundToHalf(float value) { return halfToFloat(floatToHalf(value)); }

}  // namespace gpt2
