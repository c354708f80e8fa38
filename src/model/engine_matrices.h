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

#include "format/model_config.h"
#include "format/model_file.h"

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

// Whether the engine pads this attention matrix's heads (Q, K, V and attn.c_proj's rows) to whole
// texels: a head size that is not a multiple of 4.
bool headsPadded(const ModelConfig& config, const MatrixSpec& spec);
// Whether packMatrix keeps every value of `spec`'s tensor in place, its rows of whole texels: then the
// tensor's rows, followed by zero rows, are the engine matrix, and its bytes can go to a texture as
// they are (every matrix of the official GPT-2 sizes; not heads padded to whole texels).
bool packedInPlace(const ModelConfig& config, const MatrixSpec& spec);
// Throws that the tensor of `spec` holds a non-finite value at element `at`.
[[noreturn]] void failNonFinite(const MatrixSpec& spec, float value, std::int64_t at);

// Throws unless `tensor` of `file` can be the weight of `spec`: its shape, and a storage type the
// engine reads.
void checkStoredTensor(const ModelFileHeader& file, const StoredTensor& tensor, const MatrixSpec& spec);

// Whether a matrix is read in blocks when its file holds it quantized, on every backend: the matmul
// weights and the token embedding (position embeddings, biases and LayerNorm parameters are read as
// floats).
bool keptInBlocks(const MatrixSpec& spec);

// Whether a matrix's output channels are its rows: wte and lm_head ([vocab, n_embd], read
// transposed by the lm_head, and row by row by the embedding); every Conv1D weight is [in, out].
bool outputChannelsAreRows(const MatrixSpec& spec);

}  // namespace gpt2
