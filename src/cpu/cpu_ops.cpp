#include "cpu/cpu_ops.h"

#include <algorithm>
#include <cmath>

#include "cpu/vector_math.h"

namespace gpt2::cpu {

void layerNorm(const float* x, const float* gamma, const float* beta, float eps, int n, float* out) {
    float mean = 0.0f, variance = 0.0f;
    for (int i = 0; i < n; ++i) mean += x[i];
    mean /= float(n);
    for (int i = 0; i < n; ++i) variance += (x[i] - mean) * (x[i] - mean);
    const float inverse = 1.0f / std::sqrt(variance / float(n) + eps);
    for (int i = 0; i < n; ++i) out[i] = (x[i] - mean) * inverse * gamma[i] + beta[i];
}

float activate(float x, Activation kind) {
    switch (kind) {
        case Activation::GeluTanh:
            return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
        case Activation::GeluErf: return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
        case Activation::Relu: return std::max(x, 0.0f);
    }
    return x;
}

void attendHead(const float* q, const float* keys, const float* values, int T, int C, int heads, int head, float scale,
                float* out, float* probs, std::vector<float>& scores) {
    const auto rows = [C](const float* first) {
        return [first, C](int t) { return first + std::size_t(t) * std::size_t(C); };
    };
    attendRows(q, rows(keys), rows(values), T, C, heads, head, scale, out, probs, scores);
}

}  // namespace gpt2::cpu
