#pragma once
// Feeds the tensors of a GPT-2 GGUF file (format/gguf_gpt2.h) into a model's weights. A quantized
// matrix that a matmul or the embedding reads stays quantized: its blocks go to the GPU as codes with
// their scales and offsets (BlockFormats, declared before the model is made). Float tensors, and the
// few small quantized ones the engine reads as floats (position embeddings, biases, LayerNorm
// parameters, none of which llama.cpp quantizes), arrive as floats. Native and web loading share this.
#include <vector>

#include "format/gguf.h"
#include "format/model_config.h"
#include "model/model_weights.h"

namespace gpt2 {

class GgufWeightFile {
public:
    explicit GgufWeightFile(GgufHeader header);
    GgufWeightFile(const GgufWeightFile&) = delete;  // wanted() points into the header
    GgufWeightFile& operator=(const GgufWeightFile&) = delete;

    const GgufHeader& header() const { return header_; }
    const ModelConfig& config() const { return config_; }
    // The matrices kept quantized, for the model's constructor.
    const BlockFormats& blocks() const { return blocks_; }
    // The tensors the engine uses, in file order.
    const std::vector<const GgufTensor*>& wanted() const { return wanted_; }
    // Checks the tensor's shape against the config and uploads it; `bytes` holds end - begin bytes.
    void upload(ModelWeights& weights, const GgufTensor& tensor, const std::uint8_t* bytes) const;

private:
    GgufHeader header_;
    ModelConfig config_;
    std::vector<MatrixSpec> specs_;  // the engine's matrices for the config
    BlockFormats blocks_;
    std::vector<const GgufTensor*> wanted_;
};

}  // namespace gpt2
