#pragma once
// The model's activation textures (RGBA32F render targets, a few of fp16 row pairs), each made once
// with a name and a shape and laid out as the tuning says; the store owns them all, so the model's GPU
// bytes are counted from what was declared.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gl/texture.h"
#include "model/tuning.h"

namespace gpt2 {

class Activations {
public:
    explicit Activations(const Tuning& tuning) : tuning_(tuning) {}
    // A rows x cols matrix named `name` (in errors and profiles), owned by the store.
    Texture& add(const std::string& name, int rows, int cols);
    // The same for a matrix of one row per position that row-tiled matmuls write: its rows are
    // interleaved over groups of Tuning::rowsPerFragment pages. `format`: RGBA32F, or RGBA16F.
    Texture& addPerPosition(const std::string& name, int positions, int cols,
                            TexelFormat format = TexelFormat::Float32);
    // The same for any matrix whose rows are written `interleave` per fragment.
    Texture& addInterleaved(const std::string& name, int rows, int cols, int interleave,
                            TexelFormat format = TexelFormat::Float32);
    // A rows x cols matrix of fp16 row pairs (TexelFormat::HalfPairs), written by passes with
    // row_output.glsl and read through `fetch` as any input.
    Texture& addHalfPairs(const std::string& name, int rows, int cols);
    // Bytes of every texture declared, allocated or not.
    std::int64_t bytes() const;
    // Allocates every texture declared so far; later ones are allocated as they are declared.
    void allocate();

private:
    // A texture of `storedRows` lines of `format` (row pairs: half the matrix's rows).
    Texture& addStored(const std::string& name, int storedRows, int cols, int interleave, TexelFormat format);

    const Tuning& tuning_;
    std::vector<std::unique_ptr<Texture>> textures_;
    bool allocating_ = false;  // allocate() has run
};

}  // namespace gpt2
