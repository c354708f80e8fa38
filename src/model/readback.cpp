#include "model/readback.h"

namespace gpt2 {

std::vector<float> Readback::rows(Texture& texture, int row0, int count) {
    bytes_ += std::int64_t(count) * texture.layout().texelsPerRow * 16;
    return texture.readRows(row0, count);
}

std::vector<float> Readback::take(AsyncRead& read) {
    bytes_ += read.bytes();
    return read.take();
}

}  // namespace gpt2
