#include "gl/texture.h"

#include <algorithm>

#include "util/error.h"
#include "util/half.h"

namespace gpt2 {
namespace {
std::int64_t g_textureBytes = 0;
}

std::int64_t liveTextureBytes() { return g_textureBytes; }

Texture::Texture(const TensorLayout& layout, TexelFormat format, std::string name)
    : layout_(layout), format_(format), name_(std::move(name)), texture_(GlObject::texture()) {
    glBindTexture(GL_TEXTURE_2D_ARRAY, texture_.get());
    // Float textures are incomplete under a filtering min filter; texelFetch needs them complete.
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexStorage3D(GL_TEXTURE_2D_ARRAY, 1, format == TexelFormat::Float32 ? GL_RGBA32F : GL_RGBA16F, layout.width,
                   layout.height, layout.pages);
    checkGlError(("allocating texture " + name_).c_str());
    framebuffers_.resize(std::size_t(layout.pages));
    g_textureBytes += bytes();
}

Texture::~Texture() {
    if (texture_.get()) g_textureBytes -= bytes();
}

std::int64_t Texture::bytes() const {
    return layout_.pageTexels() * layout_.pages * (format_ == TexelFormat::Float32 ? 16 : 8);
}

void Texture::writeTexels(std::int64_t begin, std::int64_t count, const void* data) {
    const int texelBytes = format_ == TexelFormat::Float32 ? 16 : 8;
    const GLenum type = format_ == TexelFormat::Float32 ? GL_FLOAT : GL_HALF_FLOAT;
    glBindTexture(GL_TEXTURE_2D_ARRAY, texture_.get());
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    forEachTexelRect(begin, count, layout_.width, layout_.height, [&](int page, int x, int y, int w, int h, std::int64_t offset) {
        glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, x, y, page, w, h, 1, GL_RGBA, type,
                        static_cast<const std::uint8_t*>(data) + offset * texelBytes);
    });
    checkGlError(("uploading texture " + name_).c_str());
}

void Texture::uploadRows(int row0, int rowCount, const float* values) {
    if (row0 < 0 || rowCount < 0 || row0 + rowCount > layout_.rows)
        fail("texture ", name_, ": rows [", row0, ", ", row0 + rowCount, ") outside its ", layout_.rows, " rows");
    const int cols = layout_.cols, paddedCols = layout_.texelsPerRow * 4;
    const std::int64_t count = std::int64_t(rowCount) * layout_.texelsPerRow;
    if (format_ == TexelFormat::Float32) {
        std::vector<float> packed(std::size_t(count) * 4, 0.0f);
        for (int r = 0; r < rowCount; ++r)
            std::copy(values + std::int64_t(r) * cols, values + std::int64_t(r + 1) * cols, packed.begin() + std::int64_t(r) * paddedCols);
        writeTexels(std::int64_t(row0) * layout_.texelsPerRow, count, packed.data());
    } else {
        std::vector<std::uint16_t> packed(std::size_t(count) * 4, 0);
        for (int r = 0; r < rowCount; ++r)
            for (int c = 0; c < cols; ++c) packed[std::size_t(r) * paddedCols + c] = floatToHalf(values[std::int64_t(r) * cols + c]);
        writeTexels(std::int64_t(row0) * layout_.texelsPerRow, count, packed.data());
    }
}

void Texture::uploadTexelStream(const void* values, bool half) {
    const std::int64_t count = layout_.texelCount(), n = count * 4;
    const bool textureHalf = format_ == TexelFormat::Float16;
    if (half == textureHalf) return writeTexels(0, count, values);
    if (half) {
        std::vector<float> wide(std::size_t(n), 0.0f);
        const auto* in = static_cast<const std::uint16_t*>(values);
        for (std::int64_t i = 0; i < n; ++i) wide[std::size_t(i)] = halfToFloat(in[i]);
        writeTexels(0, count, wide.data());
    } else {
        std::vector<std::uint16_t> narrow(std::size_t(n), 0);
        const auto* in = static_cast<const float*>(values);
        for (std::int64_t i = 0; i < n; ++i) narrow[std::size_t(i)] = floatToHalf(in[i]);
        writeTexels(0, count, narrow.data());
    }
}

const Framebuffer& Texture::framebuffer(int page) {
    Framebuffer& fb = framebuffers_.at(std::size_t(page));
    if (!fb.valid()) fb = Framebuffer({texture_.get()}, page, name_.c_str());
    return fb;
}

std::vector<float> Texture::readRows(int row0, int rowCount) {
    if (format_ != TexelFormat::Float32) fail("texture ", name_, ": only RGBA32F textures can be read back");
    if (row0 < 0 || rowCount < 0 || row0 + rowCount > layout_.rows)
        fail("texture ", name_, ": rows [", row0, ", ", row0 + rowCount, ") outside its ", layout_.rows, " rows");
    const std::int64_t count = std::int64_t(rowCount) * layout_.texelsPerRow;
    std::vector<float> texels(std::size_t(count) * 4);
    forEachTexelRect(std::int64_t(row0) * layout_.texelsPerRow, count, layout_.width, layout_.height,
                     [&](int page, int x, int y, int w, int h, std::int64_t offset) {
                         glBindFramebuffer(GL_READ_FRAMEBUFFER, framebuffer(page).id());
                         glReadPixels(x, y, w, h, GL_RGBA, GL_FLOAT, texels.data() + offset * 4);
                     });
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    checkGlError(("reading back texture " + name_).c_str());
    const int cols = layout_.cols, paddedCols = layout_.texelsPerRow * 4;
    std::vector<float> out(std::size_t(rowCount) * cols);
    for (int r = 0; r < rowCount; ++r)
        std::copy(texels.begin() + std::int64_t(r) * paddedCols, texels.begin() + std::int64_t(r) * paddedCols + cols,
                  out.begin() + std::int64_t(r) * cols);
    return out;
}

}  // namespace gpt2
