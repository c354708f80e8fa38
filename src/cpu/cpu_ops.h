#pragma once
// The CPU backend's ops other than the products (StoredMatrix::product): what CpuModel's forward is
// made of, each callable alone, so that tests/cpu/cpu_op_cases_test.cpp checks each against the
// reference as tests/ops/op_cases_test.cpp checks the GPU's passes.
#include <vector>

#include "format/model_config.h"

namespace gpt2::cpu {

// out = (x - mean) / sqrt(variance + eps) * gamma + beta over one row of `n`.
void layerNorm(const float* x, const float* gamma, const float* beta, float eps, int n, float* out);

// The MLP's activation of one value.
float activate(float x, Activation kind);

// Causal attention of one query position over the `T` cached positions before and at it, for head
// `head` of `heads` (columns [head D, (head + 1) D) of the C-wide rows): softmax(scale q k^T) v, added
// to those columns of `out` (C wide). `probs` (heads x T, head by head) gets the head's probabilities
// where not null; `scores` is room for T of them. Heads write apart: each may run on its own thread.
void attendHead(const float* q, const float* keys, const float* values, int T, int C, int heads, int head, float scale,
                float* out, float* probs, std::vector<float>& scores);

}  // namespace gpt2::cpu
