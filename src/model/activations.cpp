#include "model/activations.h"

#include <string>
#include <vector>

namespace gpt2 {

Texture& Activations::add(const std::string& name, int rows, int cols) { return addInterleaved(name, rows, cols, 1); }

Texture& Activations::addPerPosition(const std::string& name, int positions, int cols, TexelFormat format) {
    return addInterleaved(name, positions, cols, tuning_.rowsPerFragment, format);
}

Texture& Activations::addInterleaved(const std::string& name, int rows, int cols, int interleave, TexelFormat format) {
    return addStored(name, rows, cols, interleave, format);
}

Texture& Activations::addHalfPairs(const std::string& name, int rows, int cols) {
    return addStored(name, (rows + 1) / 2, cols, 1, TexelFormat::HalfPairs);
}

Texture& Activations::addStored(const std::string& name, int storedRows, int cols, int interleave, TexelFormat format) {
    const int lineWidth = tuning_.lineWidth((storedRows + interleave - 1) / interleave, (cols + 3) / 4);
    textures_.push_back(std::make_unique<Texture>(
        TensorLayout::make(storedRows, cols, tuning_.caps.limits, name.c_str(), lineWidth, interleave), format, name,
        allocating_ ? Texture::Allocation::Now : Texture::Allocation::Later));
    return *textures_.back();
}

void Activations::allocate() {
    std::vector<Texture*> textures;
    for (const auto& t : textures_)
        if (!t->allocated()) textures.push_back(t.get());
    Texture::allocateAll(textures, "allocating the " + std::to_string(textures.size()) + " activation textures");
    allocating_ = true;
}

std::int64_t Activations::bytes() const {
    std::int64_t total = 0;
    for (const auto& t : textures_) total += t->bytes();
    return total;
}

}  // namespace gpt2
