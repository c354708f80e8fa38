#pragma once
// The CPU backend's ops other than the products (StoredMatrix::product): what CpuModel's forward is
// made of, each callable alone, so that tests/cpu/cpu_op_cases_test.cpp checks each against the
// reference as tests/ops/op_cases_test.cpp checks the GPU's passes.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/vector_math.h"
#include "format/model_config.h"

namespace gpt2::cpu {

// out = (x - mean) / sqrt(variance + eps) * gamma + beta over one row of `n`.
void layerNorm(const float* x, const float* gamma, const float* beta, float eps, int n, float* out);

// The MLP's activation of one value.
float activate(float x, Activation kind);

// Causal attention of one query position over the `T` cached positions before and at it, for head
// `head` of `heads` (columns [head D, (head + 1) D) of the C-wide rows): softmax(scale q k^T) v, added
// to those columns of `out` (C wide). `keys(t)` and `values(t)` give position t's rows (fp32 or fp16
// bits). `probs` (heads x T, head by head) gets the head's probabilities where not null; `scores` is
// room for T of them. Heads write apart: each may run on its own thread.
template <class KeyRows, class ValueRows>
void attendRows(const float* q, const KeyRows& keys, const ValueRows& values, int T, int C, int heads, int head,
                float scale, float* out, float* probs, std::vector<float>& scores) {
    const int D = C / heads;
    scores.resize(std::size_t(T));
    float largest = -INFINITY;
    for (int t = 0; t < T; ++t) {
        scores[std::size_t(t)] = scale * dot(q + head * D, keys(t) + head * D, D);
        largest = std::max(largest, scores[std::size_t(t)]);
    }
    float total = 0.0f;
    for (int t = 0; t < T; ++t) total += scores[std::size_t(t)] = std::exp(scores[std::size_t(t)] - largest);
    for (int t = 0; t < T; ++t) {
        const float p = scores[std::size_t(t)] / total;
        addScaled(out + head * D, p, values(t) + head * D, D);
        if (probs) probs[std::size_t(head) * std::size_t(T) + std::size_t(t)] = p;
    }
}
// attendRows over rows C apart from `keys` and `values`.
void attendHead(const float* q, const float* keys, const float* values, int T, int C, int heads, int head, float scale,
                float* out, float* probs, std::vector<float>& scores);

}  // namespace gpt2::cpu
