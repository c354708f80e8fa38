#pragma once
// RAII owners of GL object names. Every GL object the engine makes is held by exactly one of these,
// and a process-wide counter of live objects lets tests prove that nothing leaks.
#include <utility>

#include "gl/gl_api.h"

namespace gpt2 {

enum class GlKind { Texture, Framebuffer, Program, Shader, Query };

// Live GL objects made through GlObject and not yet deleted.
int liveGlObjects();

class GlObject {
public:
    GlObject() = default;
    GlObject(GlKind kind, GLuint name);
    ~GlObject() { reset(); }
    GlObject(GlObject&& other) noexcept : kind_(other.kind_), name_(std::exchange(other.name_, 0)) {}
    GlObject& operator=(GlObject&& other) noexcept {
        if (this != &other) {
            reset();
            kind_ = other.kind_;
            name_ = std::exchange(other.name_, 0);
        }
        return *this;
    }
    GlObject(const GlObject&) = delete;
    GlObject& operator=(const GlObject&) = delete;

    GLuint get() const { return name_; }
    void reset();

    static GlObject texture();
    static GlObject framebuffer();
    static GlObject program();
    static GlObject shader(GLenum type);
    static GlObject query();

private:
    GlKind kind_ = GlKind::Texture;
    GLuint name_ = 0;
};

// Throws Error naming `what` when the GL error flag is set (GL_OUT_OF_MEMORY included).
void checkGlError(const char* what);

}  // namespace gpt2
