#pragma once
// The CPU backend's inner loops, written once with the compiler's vector extensions: SSE/AVX or NEON
// natively, SIMD128 in wasm (-msimd128), whatever the target offers.
#include <cstdint>
#include <cstring>

#include "util/half.h"

namespace gpt2::cpu {

// 128 bits: SSE's, NEON's and SIMD128's registers alike.
using Floats4 = float __attribute__((vector_size(16)));
using Ints4 = int __attribute__((vector_size(16)));

inline Floats4 load4(const float* p) {
    Floats4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Four fp16 values (bits) as floats, exactly: halfToFloat() four lanes at a time.
inline Floats4 halvesToFloats4(const std::uint16_t* p) {
    using UnsignedShorts4 = unsigned short __attribute__((vector_size(8)));
    UnsignedShorts4 h;
    std::memcpy(&h, p, sizeof h);
    const Ints4 bits = __builtin_convertvector(h, Ints4);
    const Floats4 scaled = Floats4((bits & 0x7FFF) << 13) * 0x1p112f;
    const Ints4 infOrNan = (bits & 0x7C00) == 0x7C00;
    return Floats4(Ints4(scaled) | (infOrNan & 0x7F800000) | ((bits & 0x8000) << 16));
}

// Values as floats, one or four at a time: fp32, or fp16 bits (the CPU backend's fp16 K/V cache).
inline float widen(float x) { return x; }
inline float widen(std::uint16_t bits) { return halfToFloat(bits); }
inline Floats4 load4(const std::uint16_t* p) { return halvesToFloats4(p); }

// sum_i a[i] b[i], in fp32, four partial sums of four lanes.
template <class Value>
inline float dot(const float* a, const Value* b, int n) {
    Floats4 acc[4] = {};
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 4; ++j) acc[j] += load4(a + i + 4 * j) * load4(b + i + 4 * j);
    const Floats4 all = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    float s = (all[0] + all[1]) + (all[2] + all[3]);
    for (; i < n; ++i) s += a[i] * widen(b[i]);
    return s;
}

// out[r * O + o] = sum_i w_o[i] x_r[i] for O rows of w (`n` floats each, one after another) and R
// rows of x (`xStride` apart): each load of w or x serves R or O products, where dot() loads two
// floats per product (a prompt's products, which read their inputs from cache, not registers).
template <int O, int R>
inline void dots(const float* w, const float* x, std::size_t xStride, int n, float* out) {
    Floats4 acc[R][O] = {};
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        Floats4 ws[O];
        for (int o = 0; o < O; ++o) ws[o] = load4(w + std::size_t(o) * std::size_t(n) + std::size_t(i));
        for (int r = 0; r < R; ++r) {
            const Floats4 xs = load4(x + std::size_t(r) * xStride + std::size_t(i));
            for (int o = 0; o < O; ++o) acc[r][o] += ws[o] * xs;
        }
    }
    for (int r = 0; r < R; ++r)
        for (int o = 0; o < O; ++o) {
            float s = (acc[r][o][0] + acc[r][o][1]) + (acc[r][o][2] + acc[r][o][3]);
            for (int j = i; j < n; ++j)
                s += w[std::size_t(o) * std::size_t(n) + std::size_t(j)] * x[std::size_t(r) * xStride + std::size_t(j)];
            out[r * O + o] = s;
        }
}

// y_r[j] += sum_k x_r[k] w_k[j] for R rows of x and y (`xStride`, `yStride` apart) and 4V
// consecutive floats of `n` rows of w (`wStride` apart), in the order of k, from y_r[j] on (so a row
// sums as addScaled() sums it): each row's 4V weights meet R inputs splatted from x, in registers (a
// prompt's product over a matrix stored by inputs).
template <int R, int V>
inline void axpys(const float* w, std::size_t wStride, const float* x, std::size_t xStride, int n, float* y,
                  std::size_t yStride) {
    Floats4 acc[R][V];
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < V; ++v) acc[r][v] = load4(y + std::size_t(r) * yStride + std::size_t(4 * v));
    for (int k = 0; k < n; ++k) {
        Floats4 ws[V];
        for (int v = 0; v < V; ++v) ws[v] = load4(w + std::size_t(k) * wStride + std::size_t(4 * v));
        for (int r = 0; r < R; ++r) {
            const float xs = x[std::size_t(r) * xStride + std::size_t(k)];
            for (int v = 0; v < V; ++v) acc[r][v] += xs * ws[v];
        }
    }
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < V; ++v) std::memcpy(y + std::size_t(r) * yStride + std::size_t(4 * v), &acc[r][v], 16);
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

using Bytes16 = signed char __attribute__((vector_size(16)));

// Integers of magnitude below 2^22 as floats, exactly: added to the bits of 1.5 * 2^23 they are the
// low bits of that float's mantissa. Integer adds and a float subtract stay vector operations in
// every target, where a conversion of narrow integers to floats is scalarized by some compilers
// (Emscripten 3.1's, into an extract, a convert and an insert a lane).
inline Floats4 smallIntsToFloats(Ints4 i) { return Floats4(i + 0x4B400000) - 12582912.0f; }

// Sixteen signed bytes as four groups of four floats.
inline void widenBytes(Bytes16 v, Floats4* out) {
    using Shorts8 = short __attribute__((vector_size(16)));
    const Shorts8 lo = __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7), Shorts8);
    const Shorts8 hi = __builtin_convertvector(__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15), Shorts8);
    out[0] = smallIntsToFloats(__builtin_convertvector(__builtin_shufflevector(lo, lo, 0, 1, 2, 3), Ints4));
    out[1] = smallIntsToFloats(__builtin_convertvector(__builtin_shufflevector(lo, lo, 4, 5, 6, 7), Ints4));
    out[2] = smallIntsToFloats(__builtin_convertvector(__builtin_shufflevector(hi, hi, 0, 1, 2, 3), Ints4));
    out[3] = smallIntsToFloats(__builtin_convertvector(__builtin_shufflevector(hi, hi, 4, 5, 6, 7), Ints4));
}

// GGUF's Q8_0 block: an fp16 d, then 32 int8 codes q (w = d q).
struct Q8_0Block {
    static constexpr int kBytes = 34;
    // The block's 32 codes, in order, as two vectors of signed bytes.
    static void codes(const std::uint8_t* block, Bytes16* out) {
        std::memcpy(&out[0], block + 2, 16);
        std::memcpy(&out[1], block + 18, 16);
    }
};
// Q4_0: an fp16 d, then 16 bytes, value j in byte j's low nibble and value j + 16 in its high one
// (w = d (q - 8)).
struct Q4_0Block {
    static constexpr int kBytes = 18;
    static void codes(const std::uint8_t* block, Bytes16* out) {
        using UnsignedBytes16 = unsigned char __attribute__((vector_size(16)));
        UnsignedBytes16 v;
        std::memcpy(&v, block + 2, 16);
        out[0] = Bytes16(v & 0xF) - 8;
        out[1] = Bytes16(v >> 4) - 8;
    }
};

// sum_i w[i] x[i] for a row of blocks read as stored: per block d times its codes' dot product, four
// lanes at a time, no row of floats written.
template <class Block>
inline float blockDot(const std::uint8_t* row, const float* x, int n) {
    Floats4 acc = {};
    for (int b = 0; b < n; b += 32, row += Block::kBytes, x += 32) {
        Bytes16 codes[2];
        Block::codes(row, codes);
        Floats4 w[8];
        widenBytes(codes[0], w);
        widenBytes(codes[1], w + 4);
        Floats4 block = {};
        for (int g = 0; g < 8; ++g) block += w[g] * load4(x + 4 * g);
        acc += halfToFloat(std::uint16_t(row[0] | row[1] << 8)) * block;
    }
    return sum4(acc);
}

// y[i] += a x[i] (x fp32, or fp16 bits).
template <class Value>
inline void addScaled(float* y, float a, const Value* x, int n) {
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        const Floats4 v = load4(y + i) + a * load4(x + i);
        std::memcpy(y + i, &v, sizeof v);
    }
    for (; i < n; ++i) y[i] += a * widen(x[i]);
}

}  // namespace gpt2::cpu
