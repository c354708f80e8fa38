#pragma once
// Feeds the tensors of one safetensors file into a model's weights, whichever form the file has:
// a Hugging Face checkpoint file (packed while loading) or a packed model file (uploaded as is, its
// payload checksum verified). Tensors must arrive in file order; native and web loading share this.
#include <string>
#include <vector>

#include "format/packed_model.h"
#include "model/model_weights.h"
#include "util/crc32.h"

namespace gpt2 {

class WeightFile {
public:
    WeightFile(SafetensorsHeader header, ModelWeights& weights);

    // The tensors to upload, in file order (for a Hugging Face file: those the engine uses).
    const std::vector<const TensorInfo*>& wanted() const { return wanted_; }
    void upload(const TensorInfo& info, const std::uint8_t* bytes);
    // Packed files: throws unless every payload byte arrived and its CRC-32 matches.
    void finish() const;
    const SafetensorsHeader& header() const { return header_; }

private:
    SafetensorsHeader header_;
    ModelWeights& weights_;
    bool packed_;
    std::vector<const TensorInfo*> wanted_;
    Crc32 crc_;
    std::uint64_t hashed_ = 0;
    std::uint32_t expectedCrc_ = 0;
    std::uint64_t payloadBytes_ = 0;
};

}  // namespace gpt2
