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
    // docs/architecture.md, "What the tuning decides, and why").
    bool slowHalfUnpacking = false;
    bool floatBlend = false;             // EXT_float_blend: additive blending into RGBA32F (split-K matmuls)
    bool parallelShaderCompile = false;  // KHR_parallel_shader_compile: links can be polled (Program::linked)
    // Colour attachments one draw can write: MAX_DRAW_BUFFERS (at least 4), fewer where a framebuffer
    // of that many of the engine's targets is refused (colorBits).
    int renderTargets = 4;
    // The most colour bits (R+G+B+A over the attachments) one framebuffer of the engine's targets may
    // carry, probed: ANGLE on Metal refuses more than 512 (256 on A7-A10) while MAX_DRAW_BUFFERS says 8.
    int colorBits = 0;
    // MAX_VARYING_VECTORS (at least 15): the flat inputs a one-row matmul's fragments take from its
    // vertices (matmul_row.vert) are one vector per input texel of a split-K instance, and one more.
    int varyingVectors = 15;
};

// Bits of one render target of the engine (RGBA32F activations, RGBA32UI fp16 row pairs).
constexpr int kTargetColorBits = 128;

// Whether the current context offers an extension ("EXT_float_blend"; the "GL_" prefix is optional).
bool hasGlExtension(const std::string& name);

// What the context is asked with: limits to pretend (lower than it offers), and the device.
struct CapabilityOptions {
    int maxTextureSize = 0;  // > 0 lowers MAX_TEXTURE_SIZE, so tests can force folding
    int maxColorBits = 0;    // > 0 lowers the probed colour bits of one framebuffer (colorBits)
    // A phone or tablet (the web build asks the page's navigator): there Apple GPUs keep textures to
    // kApplePhoneTextureSize.
    bool phone = false;
};

// An iPhone on iOS 26.2 was reported to claim MAX_TEXTURE_SIZE 16384 and crash above 4096, and many
// phones offer no more: on an Apple GPU in a phone, the engine keeps to this (docs/architecture.md).
constexpr int kApplePhoneTextureSize = 4096;

// Throws a clear Error when the context cannot run the engine (no float render targets, or fewer
// colour bits per framebuffer than two targets).
GlCapabilities queryCapabilities(const CapabilityOptions& options = {});

}  // namespace gpt2
