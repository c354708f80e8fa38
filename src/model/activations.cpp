#include "model/activations.h"

namespace gpt2 {

Texture& Activations::add(const std::string& name, int rows, int cols) { return addInterleaved(name, rows, cols, 1); }

Texture& Activations::addPerPosition(const std::string& name, int positions, int cols) {
    return addInterleaved(name, positions, cols, tuning_.rowsPerFragment);
}

Texture& Activations::addInterleaved(const std::string& name, int rows, int cols, int interleave) {
    const int lineWidth = tuning_.lineWidth((rows + interleave - 1) / interleave, (cols + 3) / 4);
    textures_.push_back(std::make_unique<Texture>(
        TensorLayout::make(rows, cols, tuning_.caps.limits, name.c_str(), lineWidth, interleave), TexelFormat::Float32, name));
    return *textures_.back();
}

Texture& Activations::addHalfPairs(const std::string& name, int rows, int cols) {
    const int pairs = (rows + 1) / 2;
    const int lineWidth = tuning_.lineWidth(pairs, (cols + 3) / 4);
    textures_.push_back(std::make_unique<Texture>(TensorLayout::make(pairs, cols, tuning_.caps.limits, name.c_str(), lineWidth),
                                                  TexelFormat::HalfPairs, name));
    return *textures_.back();
}

std::int64_t Activations::bytes() const {
    std::int64_t total = 0;
    for (const auto& t : textures_) total += t->bytes();
    return total;
}

}  // namespace gpt2
