#include "gl/texture.h"

#include <algorithm>

#include "util/error.h"
#include "util/half.h"

namespace gpt2 {
namespace {
std::int64_t g_textureBytes = 0;

int texelBytes(TexelFormat format) { return format == TexelFormat::Float16 ? 8 : 16; }
}  // namespace

std::int64_t liveTextureBytes() { return g_textureBytes; }

Texture::Texture(const TensorLayout& layout, TexelFormat format, std::string name)
    : layout_(layout), format_(format), name_(std::move(name)), texture_(GlObject::texture()) {
    glBindTexture(GL_TEXTURE_2D_ARRAY, texture_.get());
    // Float textures are incomplete under a filtering min filter; texelFetch needs them complete.
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    const GLenum internalFormat = format == TexelFormat::Float32   ? GL_RGBA32F
                                  : format == TexelFormat::Float16 ? GL_RGBA16F
                                                                   : GL_RGBA32UI;
    glTexStorage3D(GL_TEXTURE_2D_ARRAY, 1, internalFormat, layout.width, layout.height, layout.pages);
    checkGlError(("allocating texture " + name_).c_str());
    framebuffers_.resize(std::size_t(layout.pages));
    g_textureBytes += bytes();
}

Texture::~Texture() {
    if (texture_.get()) g_textureBytes -= bytes();
}

std::int64_t Texture::bytes() const { return layout_.pageTexels() * layout_.pages * texelBytes(format_); }

void Texture::writeTexels(std::int64_t begin, std::int64_t count, const void* data) {
    const GLenum format = format_ == TexelFormat::HalfPairs ? GL_RGBA_INTEGER : GL_RGBA;
    const GLenum type = format_ == TexelFormat::Float32   ? GL_FLOAT
                        : format_ == TexelFormat::Float16 ? GL_HALF_FLOAT
                                                          : GL_UNSIGNED_INT;
    glBindTexture(GL_TEXTURE_2D_ARRAY, texture_.get());
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    forEachTexelRect(begin, count, layout_.width, layout_.height, [&](int page, int x, int y, int w, int h, std::int64_t offset) {
        glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, x, y, page, w, h, 1, format, type,
                        static_cast<const std::uint8_t*>(data) + offset * texelBytes(format_));
    });
    checkGlError(("uploading texture " + name_).c_str());
}

void Texture::writeHalfRows(int row0, int rowCount, const std::uint16_t* halves) {
    const int texels = layout_.texelsPerRow;
    if (format_ == TexelFormat::Float16) return writeTexels(std::int64_t(row0) * texels, std::int64_t(rowCount) * texels, halves);
    if (row0 % 2 != 0 || (rowCount % 2 != 0 && row0 + rowCount != rows() - 1))
        fail("texture ", name_, ": rows [", row0, ", ", row0 + rowCount, ") do not cover whole row pairs");
    // Texel t of row 2p goes to the first half of pair texel (p, t), of row 2p + 1 to the second.
    const int pairs = (rowCount + 1) / 2;
    std::vector<std::uint16_t> paired(std::size_t(pairs) * texels * 8, 0);
    for (int r = 0; r < rowCount; ++r)
        for (int t = 0; t < texels; ++t)
            std::copy_n(halves + (std::int64_t(r) * texels + t) * 4, 4,
                        paired.begin() + ((std::int64_t(r / 2) * texels + t) * 8 + (r % 2) * 4));
    writeTexels(std::int64_t(row0 / 2) * texels, std::int64_t(pairs) * texels, paired.data());
}

void Texture::uploadRows(int row0, int rowCount, const float* values) {
    if (row0 < 0 || rowCount < 0 || row0 + rowCount > rows())
        fail("texture ", name_, ": rows [", row0, ", ", row0 + rowCount, ") outside its ", rows(), " rows");
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
        writeHalfRows(row0, rowCount, packed.data());
    }
}

void Texture::uploadTexelStream(const void* values, int rowCount, bool half) {
    if (rowCount != rows() && !(format_ == TexelFormat::HalfPairs && rowCount == rows() - 1))
        fail("texture ", name_, ": a texel stream of ", rowCount, " rows for a matrix of ", rows());
    const std::int64_t n = std::int64_t(rowCount) * layout_.texelsPerRow * 4;
    if (format_ == TexelFormat::Float32) {
        if (!half) return writeTexels(0, n / 4, values);
        std::vector<float> wide(std::size_t(n), 0.0f);
        const auto* in = static_cast<const std::uint16_t*>(values);
        for (std::int64_t i = 0; i < n; ++i) wide[std::size_t(i)] = halfToFloat(in[i]);
        return writeTexels(0, n / 4, wide.data());
    }
    if (half) return writeHalfRows(0, rowCount, static_cast<const std::uint16_t*>(values));
    std::vector<std::uint16_t> narrow(std::size_t(n), 0);
    const auto* in = static_cast<const float*>(values);
    for (std::int64_t i = 0; i < n; ++i) narrow[std::size_t(i)] = floatToHalf(in[i]);
    writeHalfRows(0, rowCount, narrow.data());
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
