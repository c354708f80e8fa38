#include "model/activations.h"

namespace gpt2 {

Texture& Activations::add(const std::string& name, int rows, int cols) {
    const int lineWidth = tuning_.lineWidth(rows, (cols + 3) / 4);
    textures_.push_back(std::make_unique<Texture>(TensorLayout::make(rows, cols, tuning_.caps.limits, name.c_str(), lineWidth),
                                                  TexelFormat::Float32, name));
    return *textures_.back();
}

std::int64_t Activations::bytes() const {
    std::int64_t total = 0;
    for (const auto& t : textures_) total += t->bytes();
    return total;
}

}  // namespace gpt2
