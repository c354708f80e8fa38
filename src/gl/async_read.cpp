#include "gl/async_read.h"

#include <algorithm>

#include "util/error.h"

#ifdef __EMSCRIPTEN__
#include <webgl/webgl2.h>
#endif

namespace gpt2 {

void AsyncRead::start(Texture& texture, int row0, int rowCount) { begin(texture, row0, rowCount, -1); }

void AsyncRead::startRowStarts(Texture& texture, int row0, int rowCount, int texels) {
    begin(texture, row0, rowCount, texels);
}

std::int64_t AsyncRead::bytes() const {
    if (!texture_) return 0;
    return std::int64_t(rowCount_) * (texels_ < 0 ? texture_->layout().texelsPerRow : texels_) * 16;
}

void AsyncRead::begin(Texture& texture, int row0, int rowCount, int texels) {
    const int perRow = texels < 0 ? texture.layout().texelsPerRow : texels;
    const std::int64_t bytes = std::int64_t(rowCount) * perRow * 16;
    if (!buffer_.get()) buffer_ = GlObject::buffer();
    glBindBuffer(GL_PIXEL_PACK_BUFFER, buffer_.get());
    // Re-specifying the store each time hands the driver a fresh one: Chromium keeps a shadow copy
    // of a read buffer once it is fenced, and warns and drops it when the same store is written again.
    glBufferData(GL_PIXEL_PACK_BUFFER, GLsizeiptr(std::max<std::int64_t>(bytes, 16)), nullptr, GL_STREAM_READ);
    // With a pack buffer bound, glReadPixels takes byte offsets into it for pointers.
    if (texels < 0)
        texture.packRows(row0, rowCount, nullptr);
    else
        texture.packRowStarts(row0, rowCount, texels, nullptr);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    // Its GL errors are checked once, in take(): in a browser a check waits for the GPU process to
    // catch up, and here that would stall every decode step before its fence.
    fence_ = GlFence::insert();
    texture_ = &texture;
    rowCount_ = rowCount;
    texels_ = texels;
}

std::vector<float> AsyncRead::take() {
    if (!texture_) fail("AsyncRead::take: no read was started");
    const int perRow = texels_ < 0 ? texture_->layout().texelsPerRow : texels_;
    const std::size_t floats = std::size_t(rowCount_) * std::size_t(perRow) * 4;
    std::vector<float> texels(floats);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, buffer_.get());
#ifdef __EMSCRIPTEN__
    emscripten_glGetBufferSubData(GL_PIXEL_PACK_BUFFER, 0, GLsizeiptr(floats * 4), texels.data());
#else
    fence_.wait();
    const void* mapped = glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, GLsizeiptr(floats * 4), GL_MAP_READ_BIT);
    if (!mapped) {
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        fail("reading back texture ", texture_->name(), ": mapping the pixel-pack buffer failed (context lost?)");
    }
    std::copy_n(static_cast<const float*>(mapped), floats, texels.data());
    glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
#endif
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    checkGlError(("reading back texture " + texture_->name()).c_str());
    fence_.reset();
    Texture& texture = *texture_;
    texture_ = nullptr;
    return texels_ < 0 ? texture.unpadRows(texels, rowCount_) : texels;
}

void AsyncRead::drop() {
    fence_.reset();
    texture_ = nullptr;
}

}  // namespace gpt2
