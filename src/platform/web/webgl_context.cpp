#include "platform/web/webgl_context.h"

#include "util/error.h"

namespace gpt2 {

WebGlContext::WebGlContext(const std::string& canvasSelector) {
    EmscriptenWebGLContextAttributes attributes;
    emscripten_webgl_init_context_attributes(&attributes);
    attributes.majorVersion = 2;
    attributes.minorVersion = 0;
    attributes.alpha = false;
    attributes.depth = false;
    attributes.stencil = false;
    attributes.antialias = false;
    attributes.powerPreference = EM_WEBGL_POWER_PREFERENCE_HIGH_PERFORMANCE;
    handle_ = emscripten_webgl_create_context(canvasSelector.c_str(), &attributes);
    if (handle_ <= 0) throw WebGl2Unavailable{int(handle_)};
    makeCurrent();
    if (!emscripten_webgl_enable_extension(handle_, "EXT_color_buffer_float"))
        fail(
            "this browser's WebGL2 lacks EXT_color_buffer_float (float render targets), which the engine needs; "
            "try a desktop browser");
    // Optional: split-K matmuls blend into float targets. WebGL extensions work only once enabled;
    // without this one the engine does not split (GlCapabilities::floatBlend).
    emscripten_webgl_enable_extension(handle_, "EXT_float_blend");
    // Optional: lets a load poll whether the programs have linked instead of waiting for them.
    emscripten_webgl_enable_extension(handle_, "KHR_parallel_shader_compile");
    // Optional: GPU timer queries for benchmark profiles (gpuTimersAvailable).
    emscripten_webgl_enable_extension(handle_, "EXT_disjoint_timer_query_webgl2");
}

WebGlContext::~WebGlContext() {
    if (handle_ > 0) emscripten_webgl_destroy_context(handle_);
}

void WebGlContext::makeCurrent() const {
    if (emscripten_webgl_make_context_current(handle_) != EMSCRIPTEN_RESULT_SUCCESS)
        fail("WebGL: cannot make the context current");
}

bool WebGlContext::lost() const { return emscripten_is_webgl_context_lost(handle_); }

}  // namespace gpt2
