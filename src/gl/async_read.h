#pragma once
// Reading texture rows back without stalling: the rows go into a pixel-pack buffer behind a fence
// (TF.js's dataAsync), and are copied out once the GPU has passed it. One buffer object serves every
// read, so a read per token makes no GL object.
#include <vector>

#include "gl/gl_objects.h"
#include "gl/texture.h"

namespace gpt2 {

class AsyncRead {
public:
    // Starts reading rows [row0, row0 + rowCount) of `texture` (RGBA32F); returns at once. A read
    // still in flight is dropped.
    void start(Texture& texture, int row0, int rowCount);
    // Whether take() would return without waiting for the GPU. Never waits.
    bool ready() const { return fence_.signaled(); }
    // The rows as rowCount x cols floats; ends the read. Native builds wait for the fence when it
    // has not signaled yet; WebGL copies at once, which stalls only if called before ready().
    std::vector<float> take();
    // Ends a read without taking it.
    void drop();

private:
    GlObject buffer_;
    GlFence fence_;
    Texture* texture_ = nullptr;
    int rowCount_ = 0;
};

}  // namespace gpt2
