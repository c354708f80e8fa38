#include "gl/framebuffer.h"

#include "util/error.h"

namespace gpt2 {

Framebuffer::Framebuffer(const std::vector<Attachment>& attachments, const char* what)
    : framebuffer_(GlObject::framebuffer()), attachments_(int(attachments.size())) {
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_.get());
    std::vector<GLenum> buffers;
    for (std::size_t i = 0; i < attachments.size(); ++i) {
        glFramebufferTextureLayer(GL_FRAMEBUFFER, GLenum(GL_COLOR_ATTACHMENT0 + i), attachments[i].texture, 0,
                                  attachments[i].layer);
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
