#include "gl/texture.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "util/error.h"
#include "util/half.h"

namespace gpt2 {
namespace {
std::int64_t g_textureBytes = 0;

int texelBytes(TexelFormat format) { return formatInfo(format).texelBytes; }
}  // namespace

const TexelFormatInfo& formatInfo(TexelFormat format) {
    static const TexelFormatInfo table[] = {
        {GL_RGBA32F, GL_RGBA, GL_FLOAT, 16, 1, "sampler2DArray"},                   // Float32
        {GL_RGBA16F, GL_RGBA, GL_HALF_FLOAT, 8, 1, "sampler2DArray"},               // Float16
        {GL_RGBA32UI, GL_RGBA_INTEGER, GL_UNSIGNED_INT, 16, 2, "usampler2DArray"},  // HalfPairs
        {GL_RGBA32I, GL_RGBA_INTEGER, GL_INT, 16, 4, "isampler2DArray"},            // Int8Quads
        {GL_RG32UI, GL_RG_INTEGER, GL_UNSIGNED_INT, 8, 4, "usampler2DArray"},       // Int4Quads
        {GL_RG32UI, GL_RG_INTEGER, GL_UNSIGNED_INT, 8, 1, "usampler2DArray"},       // Bits
    };
    return table[static_cast<int>(format)];
}

std::int64_t liveTextureBytes() { return g_textureBytes; }

Texture::Texture(const TensorLayout& layout, TexelFormat format, std::string name, Allocation when)
    : layout_(layout), format_(format), name_(std::move(name)) {
    if (when == Allocation::Now) allocate();
    if (when == Allocation::Staging) {
        allocateStorage();
        clearToZero({this});
    }
}

void Texture::allocate() { allocateAll({this}, "allocating texture " + name_); }

void Texture::allocateAll(const std::vector<Texture*>& textures, const std::string& what) {
    // Checked every kCheckedBytes and at the end rather than per texture: in a browser each check
    // waits for the GPU process to catch up. Often enough that allocating goes on little past a
    // failure (a driver may commit what it allocates).
    constexpr std::int64_t kCheckedBytes = 64 << 20;
    std::int64_t unchecked = 0;
    for (Texture* t : textures) {
        t->allocateStorage();
        unchecked += t->bytes();
        if (unchecked >= kCheckedBytes || t == textures.back()) {
            checkGlError((textures.size() == 1 ? what : what + " (up to " + t->name_ + ")").c_str());
            unchecked = 0;
        }
    }
    clearToZero(textures);
}

void Texture::allocateStorage() {
    if (allocated()) fail("texture ", name_, " is allocated already");
    GlObject texture = GlObject::texture();
    glBindTexture(GL_TEXTURE_2D_ARRAY, texture.get());
    // Float textures are incomplete under a filtering min filter; texelFetch needs them complete.
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexStorage3D(GL_TEXTURE_2D_ARRAY, 1, formatInfo(format_).internalFormat, layout_.width, layout_.height,
                   layout_.pages);
    // Counted from here on: the destructor of an allocated texture takes its bytes off the tally.
    texture_ = std::move(texture);
    g_textureBytes += bytes();
    framebuffers_.resize(std::size_t(layout_.pages));
}

void Texture::clearToZero(const std::vector<Texture*>& textures) {
    // Every format here renders (EXT_color_buffer_float), so this framebuffer is complete and is not
    // asked: a failure would show at the owner's next checkGlError.
    const GlObject target = GlObject::framebuffer();
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, target.get());
    for (Texture* t : textures) t->clearPages();
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
}

void Texture::clearPages() {
    const GLfloat zeros[4] = {0, 0, 0, 0};
    const GLuint zeroUints[4] = {0, 0, 0, 0};
    const GLint zeroInts[4] = {0, 0, 0, 0};
    for (int page = 0; page < layout_.pages; ++page) {
        glFramebufferTextureLayer(GL_DRAW_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, texture_.get(), 0, page);
        if (format_ == TexelFormat::HalfPairs || format_ == TexelFormat::Int4Quads || format_ == TexelFormat::Bits)
            glClearBufferuiv(GL_COLOR, 0, zeroUints);
        else if (format_ == TexelFormat::Int8Quads)
            glClearBufferiv(GL_COLOR, 0, zeroInts);
        else
            glClearBufferfv(GL_COLOR, 0, zeros);
    }
}

Texture::~Texture() {
    if (texture_.get()) g_textureBytes -= bytes();
}

std::int64_t Texture::bytes() const { return layout_.pageTexels() * layout_.pages * texelBytes(format_); }

void Texture::writeTexels(int row0, int rowCount, const void* data) {
    const TexelFormatInfo& info = formatInfo(format_);
    glBindTexture(GL_TEXTURE_2D_ARRAY, texture_.get());
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    layout_.forEachRowRect(row0, rowCount, [&](int page, int x, int y, int w, int h, std::int64_t offset) {
        glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, x, y, page, w, h, 1, info.uploadFormat, info.uploadType,
                        static_cast<const std::uint8_t*>(data) + offset * texelBytes(format_));
    });
}

template <typename HalfAt>
void Texture::writeHalfRows(int row0, int rowCount, HalfAt halfAt) {
    const int texels = layout_.texelsPerRow;
    const bool pairs = format_ == TexelFormat::HalfPairs;
    if (pairs && (row0 % 2 != 0 || (rowCount % 2 != 0 && row0 + rowCount != rows() - 1)))
        fail("texture ", name_, ": rows [", row0, ", ", row0 + rowCount, ") do not cover whole row pairs");
    // Row pairs: texel t of row 2p goes to the first half of pair texel (p, t), of row 2p + 1 to the
    // second; a last odd row leaves its pair's second half 0.
    const int lines = pairs ? (rowCount + 1) / 2 : rowCount, stride = pairs ? 8 : 4;
    std::vector<std::uint16_t> out(std::size_t(lines) * texels * stride, 0);
    for (int r = 0; r < rowCount; ++r) {
        std::uint16_t* line = out.data() + std::size_t(pairs ? r / 2 : r) * texels * stride + (pairs ? r % 2 * 4 : 0);
        for (int t = 0; t < texels; ++t)
            for (int k = 0; k < 4; ++k) line[t * stride + k] = halfAt(r, 4 * t + k);
    }
    writeTexels(pairs ? row0 / 2 : row0, lines, out.data());
}

void Texture::uploadCodes(const std::int8_t* values) {
    const bool nibbles = format_ == TexelFormat::Int4Quads;
    if (!nibbles && format_ != TexelFormat::Int8Quads)
        fail("texture ", name_, ": codes need an Int8Quads or Int4Quads texture");
    const int texels = layout_.texelsPerRow;
    const int channels = nibbles ? 2 : 4;
    // Texel (q, t): row 4q + c, columns 4t .. 4t + 3, the first in the lowest bits; int8 quads hold a
    // row per channel, 4-bit quads two (the even row in the low half).
    std::vector<std::uint32_t> out(std::size_t(layout_.rows) * texels * channels);
    for (int r = 0; r < rows(); ++r) {
        const auto* row = reinterpret_cast<const std::uint8_t*>(values) + std::int64_t(r) * texels * 4;
        std::uint32_t* line = out.data() + std::size_t(r / 4) * texels * channels + (nibbles ? r % 4 / 2 : r % 4);
        const int rowShift = nibbles ? 16 * (r % 2) : 0;
        for (int t = 0; t < texels; ++t) {
            // Four codes as one little-endian word, 8 bits each; 4-bit quads squeeze them to 16 bits.
            std::uint32_t word;
            std::memcpy(&word, row + 4 * t, 4);
            if (nibbles) {
                if (word & 0xF0F0F0F0u)
                    for (int k = 0; k < 4; ++k)
                        if (row[4 * t + k] > 15)
                            fail("texture ", name_, ": code ", int(row[4 * t + k]), " at row ", r,
                                 " does not fit 4 bits");
                word = (word | word >> 4) & 0x00FF00FFu;
                word = (word | word >> 8) & 0x0000FFFFu;
            }
            line[t * channels] |= word << rowShift;
        }
    }
    writeTexels(0, layout_.rows, out.data());
}

void Texture::uploadBytes(const std::uint8_t* bytes, std::int64_t count) {
    const std::int64_t rowBytes = std::int64_t(layout_.texelsPerRow) * texelBytes(format_);
    if (format_ != TexelFormat::Bits || count < 0 || count > rowBytes * rows())
        fail("texture ", name_, ": ", count, " bytes do not fit its ", rowBytes * rows(), " as a Bits stream");
    // WebGL (through Emscripten) reads 32-bit texels from a Uint32Array view of memory: an address
    // that is not a multiple of 4 would be rounded down.
    if (reinterpret_cast<std::uintptr_t>(bytes) % 4 != 0)
        fail("texture ", name_, ": a byte stream must start at an address that is a multiple of 4");
    const int whole = int(count / rowBytes);
    writeTexels(0, whole, bytes);
    if (count == std::int64_t(whole) * rowBytes) return;
    std::vector<std::uint8_t> last(std::size_t(rowBytes), 0);
    std::copy(bytes + std::int64_t(whole) * rowBytes, bytes + count, last.begin());
    writeTexels(whole, 1, last.data());
}

void Texture::uploadRows(int row0, int rowCount, const float* values) {
    if (format_ == TexelFormat::Int8Quads || format_ == TexelFormat::Int4Quads)
        fail("texture ", name_, ": int8 and 4-bit textures are written with uploadCodes");
    if (row0 < 0 || rowCount < 0 || row0 + rowCount > rows())
        fail("texture ", name_, ": rows [", row0, ", ", row0 + rowCount, ") outside its ", rows(), " rows");
    const int cols = layout_.cols, paddedCols = layout_.texelsPerRow * 4;
    if (format_ != TexelFormat::Float32)
        return writeHalfRows(row0, rowCount, [&](int r, int c) {
            return c < cols ? floatToHalf(values[std::int64_t(r) * cols + c]) : std::uint16_t(0);
        });
    std::vector<float> packed(std::size_t(rowCount) * paddedCols, 0.0f);
    for (int r = 0; r < rowCount; ++r)
        std::copy(values + std::int64_t(r) * cols, values + std::int64_t(r + 1) * cols,
                  packed.begin() + std::int64_t(r) * paddedCols);
    writeTexels(row0, rowCount, packed.data());
}

void Texture::uploadTexelStream(const void* values, int rowCount, bool half) {
    if (format_ == TexelFormat::Int8Quads || format_ == TexelFormat::Int4Quads)
        fail("texture ", name_, ": int8 and 4-bit textures are written with uploadCodes");
    if (rowCount < 0 || rowCount > rows())
        fail("texture ", name_, ": a texel stream of ", rowCount, " rows for a matrix of ", rows());
    const int paddedCols = layout_.texelsPerRow * 4;
    const bool textureHalf = format_ != TexelFormat::Float32;
    // Streams already in the texture's texel format go up as they are, then the zero rows.
    if (half == textureHalf && format_ != TexelFormat::HalfPairs) {
        writeTexels(0, rowCount, values);
        if (rowCount == rows()) return;
        const std::vector<std::uint8_t> zeros(
            std::size_t(rows() - rowCount) * std::size_t(layout_.texelsPerRow) * std::size_t(texelBytes(format_)), 0);
        return writeTexels(rowCount, rows() - rowCount, zeros.data());
    }
    auto at = [&](int r, int c) { return std::int64_t(r) * paddedCols + c; };
    const auto* halves = static_cast<const std::uint16_t*>(values);
    if (textureHalf) {
        const auto* floats = static_cast<const float*>(values);
        if (half)
            return writeHalfRows(0, rows(),
                                 [&](int r, int c) { return r < rowCount ? halves[at(r, c)] : std::uint16_t(0); });
        return writeHalfRows(
            0, rows(), [&](int r, int c) { return r < rowCount ? floatToHalf(floats[at(r, c)]) : std::uint16_t(0); });
    }
    std::vector<float> wide(std::size_t(rows()) * std::size_t(paddedCols), 0.0f);
    halvesToFloats(static_cast<const std::uint8_t*>(values), std::size_t(at(rowCount, 0)), wide.data());
    writeTexels(0, rows(), wide.data());
}

const Framebuffer& Texture::framebuffer(int page) {
    Framebuffer& fb = framebuffers_.at(std::size_t(page));
    if (!fb.valid()) fb = Framebuffer({{texture_.get(), page, formatInfo(format_).internalFormat}}, name_.c_str());
    return fb;
}

void Texture::packRows(int row0, int rowCount, float* destination) {
    if (format_ != TexelFormat::Float32) fail("texture ", name_, ": only RGBA32F textures can be read back");
    if (row0 < 0 || rowCount < 0 || row0 + rowCount > layout_.rows)
        fail("texture ", name_, ": rows [", row0, ", ", row0 + rowCount, ") outside its ", layout_.rows, " rows");
    layout_.forEachRowRect(row0, rowCount, [&](int page, int x, int y, int w, int h, std::int64_t offset) {
        void* at = destination ? static_cast<void*>(destination + offset * 4)
                               : reinterpret_cast<void*>(std::uintptr_t(offset * 16));
        glBindFramebuffer(GL_READ_FRAMEBUFFER, framebuffer(page).id());
        glReadPixels(x, y, w, h, GL_RGBA, GL_FLOAT, at);
    });
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
}

std::vector<float> Texture::unpadRows(const std::vector<float>& texels, int rowCount) const {
    const int cols = layout_.cols, paddedCols = layout_.texelsPerRow * 4;
    std::vector<float> out(std::size_t(rowCount) * cols);
    for (int r = 0; r < rowCount; ++r)
        std::copy(texels.begin() + std::int64_t(r) * paddedCols, texels.begin() + std::int64_t(r) * paddedCols + cols,
                  out.begin() + std::int64_t(r) * cols);
    return out;
}

void Texture::packRowStarts(int row0, int rowCount, int texels, float* destination) {
    if (format_ != TexelFormat::Float32) fail("texture ", name_, ": only RGBA32F textures can be read back");
    if (row0 < 0 || rowCount < 0 || row0 + rowCount > layout_.rows || texels < 0 || texels > layout_.texelsPerRow ||
        layout_.interleave != 1)
        fail("texture ", name_, ": cannot read texels [0, ", texels, ") of rows [", row0, ", ", row0 + rowCount,
             ") of its ", layout_.rows, " rows of ", layout_.texelsPerRow, " texels",
             layout_.interleave != 1 ? ", interleaved" : "");
    auto read = [&](int page, int x, int y, int w, int h, std::size_t at) {
        void* to =
            destination ? static_cast<void*>(destination + at * 4) : reinterpret_cast<void*>(std::uintptr_t(at * 16));
        glBindFramebuffer(GL_READ_FRAMEBUFFER, framebuffer(page).id());
        glReadPixels(x, y, w, h, GL_RGBA, GL_FLOAT, to);
    };
    if (layout_.width == layout_.texelsPerRow) {
        // One row per line: the starts of a page's rows are one rectangle, one read (a browser's
        // reads each wait for the GPU process).
        for (int r = row0; r < row0 + rowCount;) {
            const int y = r % layout_.height, h = std::min(row0 + rowCount - r, layout_.height - y);
            if (texels > 0) read(r / layout_.height, 0, y, texels, h, std::size_t(r - row0) * std::size_t(texels));
            r += h;
        }
    } else {
        for (int r = 0; r < rowCount; ++r)
            forEachTexelRect(std::int64_t(row0 + r) * layout_.texelsPerRow, texels, layout_.width, layout_.height,
                             [&](int page, int x, int y, int w, int h, std::int64_t offset) {
                                 read(page, x, y, w, h, std::size_t(r) * std::size_t(texels) + std::size_t(offset));
                             });
    }
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
}

std::vector<float> Texture::readRowStarts(int row0, int rowCount, int texels) {
    std::vector<float> out(std::size_t(std::max(rowCount, 0)) * std::size_t(std::max(texels, 0)) * 4);
    packRowStarts(row0, rowCount, texels, out.data());
    checkGlError(("reading back texture " + name_).c_str());
    return out;
}

std::vector<float> Texture::readRows(int row0, int rowCount) {
    std::vector<float> texels(std::size_t(rowCount > 0 ? rowCount : 0) * layout_.texelsPerRow * 4);
    packRows(row0, rowCount, texels.data());
    checkGlError(("reading back texture " + name_).c_str());
    return unpadRows(texels, rowCount);
}

}  // namespace gpt2
