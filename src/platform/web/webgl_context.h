#pragma once
// A WebGL2 context on a page's canvas, through Emscripten's GL layer.
#include <emscripten/html5.h>
#include <string>

namespace gpt2 {

class WebGlContext {
public:
    // `canvasSelector`: a CSS selector such as "#gpt2-canvas-1". Throws a clear Error when the
    // browser has no WebGL2 or no float render targets.
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
