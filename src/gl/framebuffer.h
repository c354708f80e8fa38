#pragma once
// One framebuffer per render target (page, or set of pages for multiple render targets), made once:
// passes never re-attach textures.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "gl/gl_objects.h"

namespace gpt2 {

class Framebuffer {
public:
    Framebuffer() = default;
    // Attaches layer `page` of each 2D array texture as colour attachments 0..n-1.
    Framebuffer(const std::vector<GLuint>& textures, int page, const char* what);

    GLuint id() const { return framebuffer_.get(); }
    bool valid() const { return framebuffer_.get() != 0; }
    int attachments() const { return attachments_; }

private:
    GlObject framebuffer_;
    int attachments_ = 0;
};

// Visits each run of texels of [begin, begin + count) that is one rectangle of a page: a part of a
// line, or whole lines. fn(page, x, y, w, h, offsetInRun).
template <typename Fn>
void forEachTexelRect(std::int64_t begin, std::int64_t count, int width, int height, Fn fn) {
    const std::int64_t pageTexels = std::int64_t(width) * height;
    std::int64_t done = 0;
    while (done < count) {
        const std::int64_t at = begin + done;
        const int page = int(at / pageTexels);
        const std::int64_t inPage = at % pageTexels;
        const int y = int(inPage / width), x = int(inPage % width);
        const std::int64_t left = count - done;
        if (x != 0 || left < width) {
            const int w = int(std::min<std::int64_t>(left, width - x));
            fn(page, x, y, w, 1, done);
            done += w;
        } else {
            const int h = int(std::min<std::int64_t>(left / width, height - y));
            fn(page, 0, y, width, h, done);
            done += std::int64_t(h) * width;
        }
    }
}

}  // namespace gpt2
