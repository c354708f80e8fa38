#include "model/safetensors_weight_file.h"

#include <algorithm>

namespace gpt2 {

SafetensorsWeightFile::SafetensorsWeightFile(SafetensorsHeader header, ModelWeights& weights)
    : header_(std::move(header)), weights_(weights) {
    for (const auto& [name, info] : header_.tensors)
        if (weights_.wants(name)) wanted_.push_back(&info);
    std::sort(wanted_.begin(), wanted_.end(), [](auto* a, auto* b) { return a->begin < b->begin; });
}

void SafetensorsWeightFile::upload(const TensorInfo& info, const std::uint8_t* bytes) {
    requireFloatTensor(info, header_.label);
    weights_.upload(info.name, info.shape, info.dtype, bytes);
}

}  // namespace gpt2
