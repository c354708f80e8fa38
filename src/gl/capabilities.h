#pragma once
// What the current GL context can do, checked once before anything is allocated.
#include <string>

#include "gl/tensor_layout.h"

namespace gpt2 {

struct GlCapabilities {
    std::string renderer;  // in a browser the unmasked renderer when the browser tells it
    std::string version;
    TextureLimits limits;
    bool softwareRenderer = false;  // SwiftShader, llvmpipe, softpipe: the CPU runs the shaders
    // llvmpipe: unpackHalf2x16 is slow there, so fp16 weights stay RGBA16F (Tuning;
    // docs/benchmarks.md, "What the tuning decides, and why").
    bool slowHalfUnpacking = false;
    bool floatBlend = false;        // EXT_float_blend: additive blending into RGBA32F (split-K matmuls)
    bool parallelShaderCompile = false;  // KHR_parallel_shader_compile: links can be polled (Program::linked)
    int renderTargets = 4;          // colour attachments one draw can write (MAX_DRAW_BUFFERS, at least 4)
};

// Whether the current context offers an extension ("EXT_float_blend"; the "GL_" prefix is optional).
bool hasGlExtension(const std::string& name);

// Throws a clear Error when the context cannot run the engine (no float render targets).
// `maxTextureSizeOverride` > 0 lowers MAX_TEXTURE_SIZE, so tests can force folding.
GlCapabilities queryCapabilities(int maxTextureSizeOverride = 0);

}  // namespace gpt2
