#include "platform/native/egl_context.h"

#include <EGL/eglext.h>
#include <cstring>

#include "util/error.h"

namespace gpt2 {
namespace {

EGLDisplay openDisplay() {
    // Prefer a device/surfaceless platform display: it needs no X server or Wayland compositor.
    auto getPlatformDisplay =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    const char* extensions = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (getPlatformDisplay && extensions) {
        if (std::strstr(extensions, "EGL_MESA_platform_surfaceless")) {
            EGLDisplay d = getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
            if (d != EGL_NO_DISPLAY) return d;
        }
        auto queryDevices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
        if (queryDevices && std::strstr(extensions, "EGL_EXT_platform_device")) {
            EGLDeviceEXT devices[8];
            EGLint count = 0;
            if (queryDevices(8, devices, &count) && count > 0) {
                EGLDisplay d = getPlatformDisplay(EGL_PLATFORM_DEVICE_EXT, devices[0], nullptr);
                if (d != EGL_NO_DISPLAY) return d;
            }
        }
    }
    return eglGetDisplay(EGL_DEFAULT_DISPLAY);
}

}  // namespace

EglContext::EglContext() {
    display_ = openDisplay();
    EGLint major = 0, minor = 0;
    if (display_ == EGL_NO_DISPLAY || !eglInitialize(display_, &major, &minor))
        fail("EGL: no display could be initialised (install libegl-mesa0 for Mesa's surfaceless llvmpipe)");
    if (!eglBindAPI(EGL_OPENGL_ES_API)) fail("EGL: the OpenGL ES API is not available");
    const EGLint configAttribs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE, EGL_PBUFFER_BIT,
                                    EGL_NONE};
    EGLConfig config = nullptr;
    EGLint configs = 0;
    if (!eglChooseConfig(display_, configAttribs, &config, 1, &configs) || configs == 0) {
        const EGLint anyES3[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_NONE};
        if (!eglChooseConfig(display_, anyES3, &config, 1, &configs) || configs == 0)
            fail("EGL: no config supports OpenGL ES 3");
    }
    const EGLint contextAttribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 0, EGL_NONE};
    context_ = eglCreateContext(display_, config, EGL_NO_CONTEXT, contextAttribs);
    if (context_ == EGL_NO_CONTEXT)
        fail("EGL: creating an OpenGL ES 3.0 context failed (error 0x", std::hex, eglGetError(), ")");
    if (!eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_))
        fail("EGL: making the context current without a surface failed (needs EGL_KHR_surfaceless_context)");
}

EglContext::~EglContext() {
    eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (context_ != EGL_NO_CONTEXT) eglDestroyContext(display_, context_);
    // No eglTerminate: the display is one per process and other contexts may still use it;
    // terminating it would also unload the driver under them.
}

}  // namespace gpt2
