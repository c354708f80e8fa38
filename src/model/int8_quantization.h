#pragma once
// The CPU's int8 quantization of a weight matrix: the reference that the GPU's quantization at load
// (model/ops/quantize.h) must equal.
#include <cstdint>
#include <vector>

#include "model/engine_matrices.h"

namespace gpt2 {

// Symmetric int8 with one scale per output channel (a row or a column of `values`, rows x cols), so
// value ~ q * scale: scale = the channel's largest |value| times 1/127 (as floats) with its last 8
// bits of mantissa cleared, q = round(value / scale) found without a division (|q| is the largest m
// <= 127 with |value| >= (m - 1/2) scale, each step exact), so that the GPU's quantization at load
// (model/ops/quantize.h) gives the same values on every conformant GPU.
// `values` of the result are padded with zeros to whole texels both ways (rows and columns to
// multiples of 4), row-major; `scales` has one entry per padded channel (0 for padding).
struct Int8Matrix {
    std::vector<std::int8_t> values;
    std::vector<float> scales;
};
Int8Matrix quantizeInt8(const std::vector<float>& values, int rows, int cols, bool channelsAreRows);

// Whether int8 weights quantize this matrix: every weight matrix but wpe, which is small and added to
// the embedding rather than multiplied. LayerNorm parameters and biases (one row) stay fp32.
bool quantizedWithInt8(const MatrixSpec& spec);
// How many scales an int8 matrix has: one per output channel, padded to whole texels.
int int8Channels(const MatrixSpec& spec);

}  // namespace gpt2
