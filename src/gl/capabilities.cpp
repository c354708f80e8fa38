#include "gl/capabilities.h"

#include <algorithm>
#include <vector>

#include "gl/gl_api.h"
#include "gl/gl_objects.h"
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

// How many 1x1 targets of `format` one framebuffer takes, from `most` down: no query reports the
// colour-bits cap of ANGLE's Metal back end, only checkFramebufferStatus does.
int completeTargets(GLenum format, int most) {
    std::vector<GlObject> textures;
    for (int i = 0; i < most; ++i) {
        textures.push_back(GlObject::texture());
        glBindTexture(GL_TEXTURE_2D, textures.back().get());
        glTexStorage2D(GL_TEXTURE_2D, 1, format, 1, 1);
    }
    glBindTexture(GL_TEXTURE_2D, 0);
    const GlObject framebuffer = GlObject::framebuffer();
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer.get());
    int complete = 0;
    for (int n = most; n >= 1 && complete == 0; --n) {
        for (int i = 0; i < most; ++i)
            glFramebufferTexture2D(GL_FRAMEBUFFER, GLenum(GL_COLOR_ATTACHMENT0 + i), GL_TEXTURE_2D,
                                   i < n ? textures[std::size_t(i)].get() : 0, 0);
        std::vector<GLenum> buffers;
        for (int i = 0; i < n; ++i) buffers.push_back(GLenum(GL_COLOR_ATTACHMENT0 + i));
        glDrawBuffers(GLsizei(n), buffers.data());
        if (glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE) complete = n;
    }
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    return complete;
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

GlCapabilities queryCapabilities(const CapabilityOptions& options) {
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
        fail(
            "this GPU/browser lacks EXT_color_buffer_float (float render targets), which the engine needs for "
            "activations; renderer: ",
            caps.renderer, ". Try a desktop browser or another GPU.");
    caps.floatBlend = hasGlExtension("EXT_float_blend");
    caps.parallelShaderCompile = hasGlExtension("KHR_parallel_shader_compile");
    GLint size = 0, layers = 0, drawBuffers = 0, attachments = 0, varyings = 0;
    glGetIntegerv(GL_MAX_VARYING_VECTORS, &varyings);
    caps.varyingVectors = varyings;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &size);
    glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &layers);
    glGetIntegerv(GL_MAX_DRAW_BUFFERS, &drawBuffers);
    glGetIntegerv(GL_MAX_COLOR_ATTACHMENTS, &attachments);
    if (options.maxColorBits > 0 && options.maxColorBits < 2 * kTargetColorBits)
        fail("maxColorBits ", options.maxColorBits, " is too small; use at least ", 2 * kTargetColorBits,
             " (two RGBA32F targets)");
    const int targets = std::min(drawBuffers, attachments);
    caps.colorBits =
        kTargetColorBits * std::min(completeTargets(GL_RGBA32F, targets), completeTargets(GL_RGBA32UI, targets));
    if (options.maxColorBits > 0) caps.colorBits = std::min(caps.colorBits, options.maxColorBits);
    // Two targets: decode attention over blocks of keys writes its partial sums and their statistics at once.
    if (caps.colorBits < 2 * kTargetColorBits)
        fail("this GPU/browser takes only ", caps.colorBits,
             " colour bits in one framebuffer (renderer: ", caps.renderer, "); the engine needs ", 2 * kTargetColorBits,
             ": two RGBA32F targets");
    caps.renderTargets = caps.colorBits / kTargetColorBits;
    if (options.phone && caps.renderer == "Apple GPU") size = std::min<GLint>(size, kApplePhoneTextureSize);
    caps.limits.maxTextureSize = options.maxTextureSize > 0 ? std::min<int>(size, options.maxTextureSize) : size;
    caps.limits.maxArrayLayers = layers;
    caps.limits.pagedRows = caps.softwareRenderer;
    if (options.maxTextureSize > 0 && options.maxTextureSize < 16)
        fail("maxTextureSize ", options.maxTextureSize, " is too small; use at least 16");
    return caps;
}

}  // namespace gpt2
