#pragma once
// One framebuffer per render target (page, or set of pages for multiple render targets), made once:
// passes never re-attach textures.
#include <vector>

#include "gl/gl_objects.h"

namespace gpt2 {

class Framebuffer {
public:
    struct Attachment {
        GLuint texture;  // a 2D array texture
        int layer;
        GLenum internalFormat;  // of the texture's storage
    };
    Framebuffer() = default;
    // Attaches each layer as colour attachment 0..n-1, in order. The GPU is asked whether it takes
    // the framebuffer the first time a list of internal formats is attached: whether it does depends on
    // those alone once each layer exists, and in a browser each question waits for the GPU process
    // to catch up (a load would wait once per weight matrix its passes convert).
    Framebuffer(const std::vector<Attachment>& attachments, const char* what);

    GLuint id() const { return framebuffer_.get(); }
    bool valid() const { return framebuffer_.get() != 0; }
    int attachments() const { return attachments_; }

private:
    GlObject framebuffer_;
    int attachments_ = 0;
};

}  // namespace gpt2
