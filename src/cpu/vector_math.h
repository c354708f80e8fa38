#pragma once
// The CPU backend's inner loops, written once with the compiler's vector extensions: SSE/AVX or NEON
// natively, SIMD128 in wasm (-msimd128), whatever the target offers.
#include <cstdint>
#include <cstring>

#include "util/half.h"

namespace gpt2::cpu {

// 128 bits: SSE's, NEON's and SIMD128's registers alike.
using Floats4 = float __attribute__((vector_size(16)));

inline Floats4 load4(const float* p) {
    Floats4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// sum_i a[i] b[i], in fp32, four partial sums of four lanes.
inline float dot(const float* a, const float* b, int n) {
    Floats4 acc[4] = {};
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 4; ++j) acc[j] += load4(a + i + 4 * j) * load4(b + i + 4 * j);
    const Floats4 all = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    float s = (all[0] + all[1]) + (all[2] + all[3]);
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

// The four lanes summed, in the order dot() sums them.
inline float sum4(Floats4 v) { return (v[0] + v[1]) + (v[2] + v[3]); }

// Whether the target widens bytes to floats in a few instructions (WebAssembly SIMD, SSE4.1, NEON),
// where reading codes as stored beats decoding rows to floats first: in WebAssembly Q8_0's decode step
// 200 -> 130 ms per GPT-2 124M token; on baseline x86-64 (SSE2) it went 35 -> 62 ms, the other way.
constexpr bool kBytesToFloatsAreCheap =
#if defined(__wasm_simd128__) || defined(__SSE4_1__) || defined(__ARM_NEON)
    true;
#else
    false;
#endif

// Four stored bytes as floats: signed (int8 codes) or their low or high nibbles less 8 (4-bit codes).
inline Floats4 signedBytes4(const std::uint8_t* p) {
    using Bytes4 = signed char __attribute__((vector_size(4)));
    Bytes4 v;
    std::memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, Floats4);
}
inline Floats4 nibbles4(const std::uint8_t* p, int shift) {
    using Bytes4 = unsigned char __attribute__((vector_size(4)));
    using Ints4 = int __attribute__((vector_size(16)));
    Bytes4 v;
    std::memcpy(&v, p, sizeof v);
    return __builtin_convertvector(__builtin_convertvector((v >> shift) & 0xF, Ints4) - 8, Floats4);
}

// sum_i w[i] x[i] for a row of GGUF Q8_0 blocks (an fp16 d, then 32 int8 codes: w = d q) read as
// stored: per block d times its codes' dot product, four lanes at a time, no row of floats written.
inline float dotQ8_0(const std::uint8_t* row, const float* x, int n) {
    Floats4 acc = {};
    for (int b = 0; b < n; b += 32, row += 34, x += 32) {
        Floats4 block = {};
        for (int g = 0; g < 32; g += 4) block += signedBytes4(row + 2 + g) * load4(x + g);
        acc += halfToFloat(std::uint16_t(row[0] | row[1] << 8)) * block;
    }
    return sum4(acc);
}

// The same for Q4_0 blocks (an fp16 d, then 16 bytes: value j in byte j's low nibble and value j + 16
// in its high one; w = d (q - 8)).
inline float dotQ4_0(const std::uint8_t* row, const float* x, int n) {
    Floats4 acc = {};
    for (int b = 0; b < n; b += 32, row += 18, x += 32) {
        Floats4 block = {};
        for (int g = 0; g < 16; g += 4)
            block += nibbles4(row + 2 + g, 0) * load4(x + g) + nibbles4(row + 2 + g, 4) * load4(x + 16 + g);
        acc += halfToFloat(std::uint16_t(row[0] | row[1] << 8)) * block;
    }
    return sum4(acc);
}

// y[i] += a x[i].
inline void addScaled(float* y, float a, const float* x, int n) {
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        const Floats4 v = load4(y + i) + a * load4(x + i);
        std::memcpy(y + i, &v, sizeof v);
    }
    for (; i < n; ++i) y[i] += a * x[i];
}

}  // namespace gpt2::cpu
