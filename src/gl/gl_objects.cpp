#include "gl/gl_objects.h"

#include "util/error.h"

namespace gpt2 {
namespace {
int g_live = 0;
int g_fences = 0;

const char* glErrorName(GLenum error) {
    switch (error) {
        case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
        case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
        case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
        case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
        case GL_OUT_OF_MEMORY:
            return "GL_OUT_OF_MEMORY (the model does not fit in GPU memory; try int8 or int4 weights, a 4-bit GGUF "
                   "file, or a smaller model)";
        default: return "unknown GL error";
    }
}
}  // namespace

int liveGlObjects() { return g_live; }

int liveGlFences() { return g_fences; }

GlObject::GlObject(GlKind kind, GLuint name) : kind_(kind), name_(name) {
    if (name_ == 0) fail("creating a GL object failed (context lost or out of memory?)");
    ++g_live;
}

void GlObject::reset() {
    if (name_ == 0) return;
    switch (kind_) {
        case GlKind::Texture: glDeleteTextures(1, &name_); break;
        case GlKind::Framebuffer: glDeleteFramebuffers(1, &name_); break;
        case GlKind::Program: glDeleteProgram(name_); break;
        case GlKind::Shader: glDeleteShader(name_); break;
        case GlKind::Query: glDeleteQueries(1, &name_); break;
        case GlKind::Buffer: glDeleteBuffers(1, &name_); break;
    }
    name_ = 0;
    --g_live;
}

GlObject GlObject::texture() {
    GLuint name = 0;
    glGenTextures(1, &name);
    return {GlKind::Texture, name};
}

GlObject GlObject::framebuffer() {
    GLuint name = 0;
    glGenFramebuffers(1, &name);
    return {GlKind::Framebuffer, name};
}

GlObject GlObject::program() { return {GlKind::Program, glCreateProgram()}; }

GlObject GlObject::shader(GLenum type) { return {GlKind::Shader, glCreateShader(type)}; }

GlObject GlObject::query() {
    GLuint name = 0;
    glGenQueries(1, &name);
    return {GlKind::Query, name};
}

GlObject GlObject::buffer() {
    GLuint name = 0;
    glGenBuffers(1, &name);
    return {GlKind::Buffer, name};
}

GlFence GlFence::insert() {
    GlFence fence;
    fence.sync_ = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    if (!fence.sync_) fail("creating a GL fence failed (context lost?)");
    ++g_fences;
    glFlush();
    return fence;
}

bool GlFence::signaled() const {
    if (!sync_) return true;
    GLint status = GL_UNSIGNALED;
    glGetSynciv(sync_, GL_SYNC_STATUS, 1, nullptr, &status);
    return status == GL_SIGNALED;
}

void GlFence::wait() const {
    if (!sync_) return;
#ifdef __EMSCRIPTEN__
    fail("GlFence::wait: WebGL cannot block on a fence; poll signaled() between tasks");
#else
    constexpr GLuint64 kSecond = 1000000000;
    for (;;) {
        const GLenum r = glClientWaitSync(sync_, GL_SYNC_FLUSH_COMMANDS_BIT, kSecond);
        if (r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED) return;
        if (r == GL_WAIT_FAILED) fail("waiting on a GL fence failed (context lost?)");
    }
#endif
}

void GlFence::reset() {
    if (!sync_) return;
    glDeleteSync(sync_);
    sync_ = nullptr;
    --g_fences;
}

void checkGlError(const char* what) {
    const GLenum error = glGetError();
    if (error != GL_NO_ERROR) fail(what, ": ", glErrorName(error));
}

}  // namespace gpt2
