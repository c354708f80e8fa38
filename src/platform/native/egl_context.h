#pragma once
// A headless GLES 3 context through EGL: surfaceless Mesa (llvmpipe) on CPU machines, the vendor
// driver on a GPU machine. No window system needed.
#include <EGL/egl.h>

namespace gpt2 {

class EglContext {
public:
    EglContext();  // creates the context and makes it current; throws Error when EGL/GLES 3 is missing
    ~EglContext();
    EglContext(const EglContext&) = delete;
    EglContext& operator=(const EglContext&) = delete;

private:
    EGLDisplay display_ = EGL_NO_DISPLAY;
    EGLContext context_ = EGL_NO_CONTEXT;
};

}  // namespace gpt2
