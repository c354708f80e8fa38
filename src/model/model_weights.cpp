#include "model/model_weights.h"

#include "util/error.h"

namespace gpt2 {

ModelWeights::ModelWeights(const TensorSource& source, TexelFormat format, const TextureLimits& limits) {
    for (const MatrixSpec& spec : engineMatrices(source.config())) {
        // LayerNorm parameters and biases stay fp32: they are tiny and fp16 would add error for nothing.
        const TexelFormat texelFormat = spec.rows == 1 ? TexelFormat::Float32 : format;
        auto texture = std::make_unique<Texture>(TensorLayout::make(spec.rows, spec.cols, limits, spec.name.c_str()),
                                                 texelFormat, spec.name);
        const std::vector<float> values = packMatrix(source, spec);
        texture->uploadRows(0, spec.rows, values.data());
        textures_[spec.name] = std::move(texture);
    }
}

const Texture& ModelWeights::operator[](const std::string& name) const {
    auto it = textures_.find(name);
    if (it == textures_.end()) fail("model weights: no texture ", name);
    return *it->second;
}

std::int64_t ModelWeights::bytes() const {
    std::int64_t total = 0;
    for (const auto& [name, texture] : textures_) total += texture->bytes();
    return total;
}

}  // namespace gpt2
