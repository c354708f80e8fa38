#include "gl/capabilities.h"

#include <algorithm>

#include "gl/gl_api.h"
#include "util/error.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#include <cstdlib>

// Chromium masks GL_RENDERER as "WebKit WebGL"; there WEBGL_debug_renderer_info names the real one
// ("ANGLE (..., SwiftShader Device ...)"). Firefox reports its renderer through GL_RENDERER and
// deprecates the extension, so the extension is asked only for the masked value.
EM_JS(char*, gpt2UnmaskedRenderer, (), {
    const gl = GL.currentContext && GL.currentContext.GLctx;
    const info = gl && gl.getExtension('WEBGL_debug_renderer_info');
    return allocateUTF8(info ? String(gl.getParameter(info.UNMASKED_RENDERER_WEBGL)) : '');
});
#endif

namespace gpt2 {
namespace {

std::string glString(GLenum name) {
    const auto* text = reinterpret_cast<const char*>(glGetString(name));
    return text ? text : "";
}

}  // namespace

bool hasGlExtension(const std::string& name) {
    GLint count = 0;
    glGetIntegerv(GL_NUM_EXTENSIONS, &count);
    for (GLint i = 0; i < count; ++i) {
        const auto* ext = reinterpret_cast<const char*>(glGetStringi(GL_EXTENSIONS, GLuint(i)));
        if (ext && (name == ext || "GL_" + name == ext)) return true;
    }
    return false;
}

GlCapabilities queryCapabilities(int maxTextureSizeOverride) {
    GlCapabilities caps;
    caps.version = glString(GL_VERSION);
    caps.renderer = glString(GL_RENDERER);
    if (caps.version.empty()) fail("no current GL context (was the WebGL2/EGL context created?)");
#ifdef __EMSCRIPTEN__
    if (char* unmasked = caps.renderer == "WebKit WebGL" ? gpt2UnmaskedRenderer() : nullptr) {
        if (*unmasked) caps.renderer = unmasked;
        std::free(unmasked);
    }
#endif
    for (const char* software : {"SwiftShader", "llvmpipe", "softpipe", "Software Rasterizer"})
        if (caps.renderer.find(software) != std::string::npos) caps.softwareRenderer = true;
    caps.slowHalfUnpacking = caps.renderer.find("llvmpipe") != std::string::npos;
    if (!hasGlExtension("EXT_color_buffer_float"))
        fail("this GPU/browser lacks EXT_color_buffer_float (float render targets), which the engine needs for "
             "activations; renderer: ", caps.renderer, ". Try a desktop browser or another GPU.");
    caps.floatBlend = hasGlExtension("EXT_float_blend");
    caps.parallelShaderCompile = hasGlExtension("KHR_parallel_shader_compile");
    GLint size = 0, layers = 0, drawBuffers = 0, attachments = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &size);
    glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &layers);
    glGetIntegerv(GL_MAX_DRAW_BUFFERS, &drawBuffers);
    glGetIntegerv(GL_MAX_COLOR_ATTACHMENTS, &attachments);
    caps.renderTargets = std::min(drawBuffers, attachments);
    caps.limits.maxTextureSize = maxTextureSizeOverride > 0 ? std::min<int>(size, maxTextureSizeOverride) : size;
    caps.limits.maxArrayLayers = layers;
    caps.limits.pagedRows = caps.softwareRenderer;
    if (maxTextureSizeOverride > 0 && maxTextureSizeOverride < 16)
        fail("maxTextureSize ", maxTextureSizeOverride, " is too small; use at least 16");
    return caps;
}

}  // namespace gpt2
