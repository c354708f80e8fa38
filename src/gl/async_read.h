#pragma once
// Reading texture rows back without stalling: the rows go into a pixel-pack buffer behind a fence
// (TF.js's dataAsync), and are copied out once the GPU has passed it. One buffer object serves every
// read, so a read per token makes no GL object.
#include <cstdint>
#include <vector>

#include "gl/gl_objects.h"
#include "gl/texture.h"

namespace gpt2 {

class AsyncRead {
public:
    // Starts reading rows [row0, row0 + rowCount) of `texture` (RGBA32F); returns at once. A read
    // still in flight is dropped.
    void start(Texture& texture, int row0, int rowCount);
    // The same for the first `texels` texels of each row (Texture::readRowStarts); take() then
    // returns rowCount x (texels * 4) floats.
    void startRowStarts(Texture& texture, int row0, int rowCount, int texels);
    // Whether take() would return without waiting for the GPU. Never waits.
    bool ready() const { return fence_.signaled(); }
    // The rows as rowCount x cols floats (or row starts); ends the read. Native builds wait for the fence when it
    // has not signaled yet; WebGL copies at once, which stalls only if called before ready().
    std::vector<float> take();
    // Ends a read without taking it.
    void drop();
    // Bytes the read in flight brings back (whole texels); 0 when none is.
    std::int64_t bytes() const;

private:
    void begin(Texture& texture, int row0, int rowCount, int texels);

    GlObject buffer_;
    GlFence fence_;
    Texture* texture_ = nullptr;
    int rowCount_ = 0;
    int texels_ = -1;  // per row, for row starts; -1: whole rows
};

}  // namespace gpt2
