#pragma once
// Feeds the tensors of one safetensors file of a Hugging Face checkpoint (a single file or a shard)
// into a model's weights, as the file stores them (ModelWeights::upload from bytes). Native and web
// loading share this; tensors arrive in file order.
#include <vector>

#include "format/safetensors.h"
#include "model/model_weights.h"

namespace gpt2 {

class SafetensorsWeightFile {
public:
    SafetensorsWeightFile(SafetensorsHeader header, ModelWeights& weights);

    // The tensors the engine uses, in file order.
    const std::vector<const TensorInfo*>& wanted() const { return wanted_; }
    void upload(const TensorInfo& info, const std::uint8_t* bytes);
    const SafetensorsHeader& header() const { return header_; }

private:
    SafetensorsHeader header_;
    ModelWeights& weights_;
    std::vector<const TensorInfo*> wanted_;
};

}  // namespace gpt2
