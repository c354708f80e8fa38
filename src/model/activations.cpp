#include "model/activations.h"

namespace gpt2 {

namespace {
Texture* made(std::vector<std::unique_ptr<Texture>>& textures, const Tuning& tuning, const std::string& name, int rows,
              int cols, int interleave) {
    const int lineWidth = tuning.lineWidth((rows + interleave - 1) / interleave, (cols + 3) / 4);
    textures.push_back(std::make_unique<Texture>(
        TensorLayout::make(rows, cols, tuning.caps.limits, name.c_str(), lineWidth, interleave), TexelFormat::Float32, name));
    return textures.back().get();
}
}  // namespace

Texture& Activations::add(const std::string& name, int rows, int cols) { return *made(textures_, tuning_, name, rows, cols, 1); }

Texture& Activations::addPerPosition(const std::string& name, int positions, int cols) {
    return *made(textures_, tuning_, name, positions, cols, tuning_.rowsPerFragment);
}

std::int64_t Activations::bytes() const {
    std::int64_t total = 0;
    for (const auto& t : textures_) total += t->bytes();
    return total;
}

}  // namespace gpt2
