#pragma once
// A WebGL2 context on a page's canvas, through Emscripten's GL layer.
#include <emscripten/html5.h>
#include <string>

namespace gpt2 {

// The browser gave the canvas no WebGL2 context (Emscripten's error code): JS sees it as the
// module's WebGL2UnavailableError (bindings.cpp), whose message web/module/gpt2-errors.js writes.
struct WebGl2Unavailable {
    int code;
};

class WebGlContext {
public:
    // `canvasSelector`: a CSS selector such as "#gpt2-canvas-1". Throws WebGl2Unavailable when the
    // browser gives no WebGL2 context, a clear Error when it has no float render targets.
    explicit WebGlContext(const std::string& canvasSelector);
    ~WebGlContext();
    WebGlContext(const WebGlContext&) = delete;
    WebGlContext& operator=(const WebGlContext&) = delete;

    void makeCurrent() const;
    bool lost() const;
    EMSCRIPTEN_WEBGL_CONTEXT_HANDLE handle() const { return handle_; }

private:
    EMSCRIPTEN_WEBGL_CONTEXT_HANDLE handle_ = 0;
};

}  // namespace gpt2
