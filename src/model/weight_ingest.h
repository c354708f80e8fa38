#pragma once
// The one way weights reach a model: each tensor of a model file (format/model_file.h), whatever
// its format and storage type, from its bytes as stored. Floats go to the GPU as they are; a
// quantized matrix stays in its blocks, decoded there; layout changes (transposes, row pairs, block
// decoding) happen there too (ModelWeights). Native and web loading share this.
#include <cstdint>
#include <vector>

#include "format/model_file.h"
#include "model/model_weights.h"

namespace gpt2 {

// The matrices that `files` hold quantized and the model reads in blocks (every matmul weight and
// the token embedding), for the model's constructor.
BlockFormats blockFormats(const ModelConfig& config, const std::vector<const ModelFileHeader*>& files);

// The tensors of `file` that the model reads, in file order.
std::vector<const StoredTensor*> wantedTensors(const ModelWeights& weights, const ModelFileHeader& file);

// Checks `tensor` of `file` against the model's config and uploads it from its bytes (end - begin of
// them).
void ingest(ModelWeights& weights, const ModelFileHeader& file, const StoredTensor& tensor, const std::uint8_t* bytes);

}  // namespace gpt2
