#pragma once
// Every read of a model's results back from the GPU goes through its Readback, which counts the bytes
// that crossed (whole texels: what the GPU sends), for stats() and the benchmark's bytes per token.
#include <cstdint>
#include <vector>

#include "gl/async_read.h"
#include "gl/texture.h"

namespace gpt2 {

class Readback {
public:
    // Rows [row0, row0 + count) of `texture` as Texture::readRows gives them, waiting for the GPU.
    std::vector<float> rows(Texture& texture, int row0, int count);
    // The result of a read in flight (AsyncRead::take).
    std::vector<float> take(AsyncRead& read);
    std::int64_t bytes() const { return bytes_; }

private:
    std::int64_t bytes_ = 0;
};

}  // namespace gpt2
