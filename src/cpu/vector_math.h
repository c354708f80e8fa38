#pragma once
// The CPU backend's inner loops, written once with the compiler's vector extensions: SSE/AVX or NEON
// natively, SIMD128 in wasm (-msimd128), whatever the target offers.
#include <cstring>

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
