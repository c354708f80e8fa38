#pragma once
// From Hugging Face tensors to the engine's matrices (the texture layout's logical form):
//  - Conv1D weights are already [in, out] (x @ W); their rows are padded to whole texels of the input;
//  - each attention head is padded to whole texels (head_dim -> 4 * ceil(head_dim / 4)) in Q, K, V
//    and in the rows of attn.c_proj, so no texel ever mixes two heads;
//  - wte gets zero rows up to a multiple of 4 so the tied lm_head reads whole texels.
// Padding is always 0, which keeps padded columns of every activation at exactly 0.
#include <cstdint>
#include <string>
#include <vector>

#include "format/checkpoint.h"
#include "format/ggml_type.h"

namespace gpt2 {

struct EngineDims {
    int embedTexels;  // ceil(n_embd / 4)
    int innerTexels;  // ceil(n_inner / 4)
    int headTexels;   // ceil(head_dim / 4)
    int headsTexels;  // n_head * headTexels: one of Q, K, V with every head padded
    int vocabRows;    // vocab rounded up to a multiple of 4
};
EngineDims engineDims(const ModelConfig& config);

struct MatrixSpec {
    std::string name;  // the Hugging Face tensor name without "transformer."
    int rows;          // the engine matrix
    int cols;
    std::vector<std::int64_t> sourceShape;  // the Hugging Face tensor's shape
};

// Every matrix the engine uploads, in upload order.
std::vector<MatrixSpec> engineMatrices(const ModelConfig& config);

// The engine matrix (rows x cols floats) from the Hugging Face tensor's values (sourceShape).
// Throws on NaN or Inf, naming the tensor.
std::vector<float> packMatrix(const ModelConfig& config, const MatrixSpec& spec, const std::vector<float>& source);

// Whether packMatrix keeps every value of `spec`'s tensor in place, its rows of whole texels: then the
// tensor's rows, followed by zero rows, are the engine matrix, and its bytes can go to a texture as
// they are (every matrix of the official GPT-2 sizes; not heads padded to whole texels).
bool packedInPlace(const ModelConfig& config, const MatrixSpec& spec);
// Throws that the tensor of `spec` holds a non-finite value at element `at`.
[[noreturn]] void failNonFinite(const MatrixSpec& spec, float value, std::int64_t at);

// Whether a matrix's output channels are its rows: wte and lm_head ([vocab, n_embd], read
// transposed by the lm_head, and row by row by the embedding); every Conv1D weight is [in, out].
bool outputChannelsAreRows(const MatrixSpec& spec);

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

// A matrix of affine blocks (format/ggml_type.h) in the engine's layout. Its codes stay in the
// tensor's bytes, which go to the GPU as they are and are decoded there (model/ops/block_codes.h);
// the CPU decodes the scales and offsets only, [K / scaleValues, output channels padded to 4]
// whichever way the matrix runs: as fp16 bits where the type's are fp16 values (halfScales and
// halfOffsets), as floats otherwise (scales and offsets); offsets empty where the type has none.
// Output channel n is the tensor's row n.
struct BlockMatrix {
    GgmlType type = GgmlType::Q8_0;
    const std::uint8_t* source = nullptr;  // the tensor's bytes: rows of K values, one per output
    std::int64_t K = 0;
    std::int64_t rowBytes = 0;
    int outputs = 0;  // the tensor's rows
    bool channelsAreRows = false;
    std::vector<float> scales;
    std::vector<float> offsets;
    std::vector<std::uint16_t> halfScales;
    std::vector<std::uint16_t> halfOffsets;
    int blocks = 0;    // scales along K
    int channels = 0;  // output channels, padded
};
// The engine matrix of `spec` from a tensor of `type` of `outputs` rows of K values (a GGUF tensor:
// rows are output channels, blocks run along K), reading its `bytes`, which must outlive it. Throws
// when the engine pads the heads of attention matrices (a head size that is not a multiple of 4),
// which would split blocks or move output channels.
BlockMatrix packBlocks(const ModelConfig& config, const MatrixSpec& spec, GgmlType type, const std::uint8_t* bytes,
                       std::int64_t K, std::int64_t outputs);

}  // namespace gpt2
