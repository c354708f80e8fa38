#pragma once
// RAII owners of GL object names. Every GL object the engine makes is held by exactly one of these,
// and a process-wide counter of live objects lets tests prove that nothing leaks.
#include <utility>

#include "gl/gl_api.h"

namespace gpt2 {

enum class GlKind { Texture, Framebuffer, Program, Shader, Query, Buffer };

// Live GL objects made through GlObject and not yet deleted.
int liveGlObjects();
// Live fences (GlFence): counted apart, since a polled generation holds one or two between tokens
// wherever it stands, while named objects must not change at all.
int liveGlFences();

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
    static GlObject buffer();

private:
    GlKind kind_ = GlKind::Texture;
    GLuint name_ = 0;
};

// A fence after the commands issued so far: the one kind of GL object that is not a GLuint name.
class GlFence {
public:
    GlFence() = default;
    ~GlFence() { reset(); }
    GlFence(GlFence&& other) noexcept : sync_(std::exchange(other.sync_, nullptr)) {}
    GlFence& operator=(GlFence&& other) noexcept {
        if (this != &other) {
            reset();
            sync_ = std::exchange(other.sync_, nullptr);
        }
        return *this;
    }
    GlFence(const GlFence&) = delete;
    GlFence& operator=(const GlFence&) = delete;

    // Inserts the fence and flushes, so that it signals without anyone waiting on it.
    static GlFence insert();
    // Whether the GPU has passed the fence; never waits. WebGL updates the status only between
    // tasks, so a caller polls across turns of the event loop.
    bool signaled() const;
    // Blocks until the GPU has passed the fence (native builds; WebGL cannot wait on fences).
    void wait() const;
    void reset();

private:
    GLsync sync_ = nullptr;
};

// Throws Error naming `what` when the GL error flag is set (GL_OUT_OF_MEMORY included).
void checkGlError(const char* what);

}  // namespace gpt2
