#include "gl/framebuffer.h"

#include "util/error.h"

namespace gpt2 {

Framebuffer::Framebuffer(const std::vector<GLuint>& textures, int page, const char* what)
    : framebuffer_(GlObject::framebuffer()), attachments_(int(textures.size())) {
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_.get());
    std::vector<GLenum> buffers;
    for (std::size_t i = 0; i < textures.size(); ++i) {
        glFramebufferTextureLayer(GL_FRAMEBUFFER, GLenum(GL_COLOR_ATTACHMENT0 + i), textures[i], 0, page);
        buffers.push_back(GLenum(GL_COLOR_ATTACHMENT0 + i));
    }
    glDrawBuffers(GLsizei(buffers.size()), buffers.data());
    const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (status != GL_FRAMEBUFFER_COMPLETE)
        fail(what, ": framebuffer incomplete (status 0x", std::hex, status,
             "); float render targets need EXT_color_buffer_float");
}

}  // namespace gpt2
