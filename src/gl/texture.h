#pragma once
// A matrix in GPU memory: a 2D array texture in the layout of TensorLayout, RGBA32F or RGBA16F.
#include <cstdint>
#include <string>
#include <vector>

#include "gl/framebuffer.h"
#include "gl/gl_objects.h"
#include "gl/tensor_layout.h"

namespace gpt2 {

enum class TexelFormat { Float32, Float16 };

// Bytes of texture storage currently allocated by all live Textures.
std::int64_t liveTextureBytes();

class Texture {
public:
    Texture(const TensorLayout& layout, TexelFormat format, std::string name);
    ~Texture();
    Texture(const Texture&) = delete;
    Texture& operator=(const Texture&) = delete;

    const TensorLayout& layout() const { return layout_; }
    TexelFormat format() const { return format_; }
    const std::string& name() const { return name_; }
    GLuint id() const { return texture_.get(); }
    std::int64_t bytes() const;

    // Writes rows [row0, row0 + rowCount) from `values` (rowCount x cols floats, row-major);
    // padding columns become 0. Float16 textures store the values rounded to half.
    void uploadRows(int row0, int rowCount, const float* values);
    // Writes the whole matrix from its texel stream: rows x (texelsPerRow * 4) values, F32 (`half`
    // false) or F16 bit patterns, converted when the texture's format differs.
    void uploadTexelStream(const void* values, bool half);
    // Reads rows back as rowCount x cols floats. Needs a Float32 texture (a render target).
    std::vector<float> readRows(int row0, int rowCount);

    // The framebuffer that renders into one page; made on first use and kept.
    const Framebuffer& framebuffer(int page);

private:
    void writeTexels(std::int64_t begin, std::int64_t count, const void* data);

    TensorLayout layout_;
    TexelFormat format_;
    std::string name_;
    GlObject texture_;
    std::vector<Framebuffer> framebuffers_;
};

}  // namespace gpt2
