#include "gl/framebuffer.h"

#include <map>
#include <set>
#include <sstream>
#include <string>

#include "util/error.h"

namespace gpt2 {
namespace {

const char* statusName(GLenum status) {
    switch (status) {
        case GL_FRAMEBUFFER_UNSUPPORTED: return "FRAMEBUFFER_UNSUPPORTED";
        case GL_FRAMEBUFFER_INCOMPLETE_ATTACHMENT: return "FRAMEBUFFER_INCOMPLETE_ATTACHMENT";
        case GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT: return "FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT";
        case GL_FRAMEBUFFER_INCOMPLETE_MULTISAMPLE: return "FRAMEBUFFER_INCOMPLETE_MULTISAMPLE";
        case GL_FRAMEBUFFER_UNDEFINED: return "FRAMEBUFFER_UNDEFINED";
        default: return "an unknown status";
    }
}

// The bound framebuffer's first `count` colour attachments as the reader of an error wants them:
// "8 RGBA32F targets, 1,024 colour bits".
std::string describeAttachments(int count) {
    std::map<std::string, int> formats;
    int bits = 0;
    for (int i = 0; i < count; ++i) {
        const GLenum attachment = GLenum(GL_COLOR_ATTACHMENT0 + i);
        GLint sizes[4] = {}, type = 0;
        const GLenum names[4] = {GL_FRAMEBUFFER_ATTACHMENT_RED_SIZE, GL_FRAMEBUFFER_ATTACHMENT_GREEN_SIZE,
                                 GL_FRAMEBUFFER_ATTACHMENT_BLUE_SIZE, GL_FRAMEBUFFER_ATTACHMENT_ALPHA_SIZE};
        for (int c = 0; c < 4; ++c)
            glGetFramebufferAttachmentParameteriv(GL_FRAMEBUFFER, attachment, names[c], &sizes[c]);
        glGetFramebufferAttachmentParameteriv(GL_FRAMEBUFFER, attachment, GL_FRAMEBUFFER_ATTACHMENT_COMPONENT_TYPE,
                                              &type);
        const bool rgbaOfOneSize = sizes[0] == sizes[1] && sizes[1] == sizes[2] && sizes[2] == sizes[3];
        std::ostringstream name;
        if (rgbaOfOneSize)
            name << "RGBA" << sizes[0];
        else
            name << "R" << sizes[0] << "G" << sizes[1] << "B" << sizes[2] << "A" << sizes[3] << " ";
        name << (type == GL_FLOAT ? "F" : type == GL_UNSIGNED_INT ? "UI" : type == GL_INT ? "I" : "");
        ++formats[name.str()];
        bits += sizes[0] + sizes[1] + sizes[2] + sizes[3];
    }
    std::ostringstream out;
    for (const auto& [format, n] : formats) out << n << " " << format << (n == 1 ? " target, " : " targets, ");
    const std::string grouped = bits >= 1000
                                    ? std::to_string(bits / 1000) + "," + std::to_string(bits % 1000 + 1000).substr(1)
                                    : std::to_string(bits);
    out << grouped << " colour bits";
    return out.str();
}

}  // namespace

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
    static std::set<std::vector<GLenum>> taken;  // lists of internal formats the GPU took
    std::vector<GLenum> formats;
    for (const Attachment& a : attachments) formats.push_back(a.internalFormat);
    if (taken.count(formats) != 0) {
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        return;
    }
    const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    if (status == GL_FRAMEBUFFER_COMPLETE) taken.insert(formats);
    const std::string described = status == GL_FRAMEBUFFER_COMPLETE ? "" : describeAttachments(attachments_);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (status != GL_FRAMEBUFFER_COMPLETE)
        fail(what, ": the GPU refuses this pass's framebuffer: ", statusName(status), " (0x", std::hex, status,
             std::dec, "): ", described,
             status == GL_FRAMEBUFFER_UNSUPPORTED
                 ? "; some GPUs take fewer colour bits in one pass than MAX_DRAW_BUFFERS "
                   "suggests: try a lower tuning.maxColorBits (--max-color-bits)"
                 : "");
}

}  // namespace gpt2
