// What a fragment shader can do per second on this GPU, apart from the engine: the ceilings that a
// one-row matmul's passes meet (docs/benchmarks.md, "What bounds the speed").
//
//   build/native/fragment_rates [--draws N]
//
// Each loop case runs 32 iterations per fragment, each turning 16 weights (32 for the 128-bit
// 4-bit texels) into a 4 x 4 block that multiplies an input texel, as a one-row matmul's loop does,
// or only fetching them; 65,536 fragments in one draw. Each blend case runs the same fragments as a
// one-row split-K matmul draws them: 1,600 output texels in lines of 32, 8 input texels per
// fragment, blended (or not) into RGBA32F. One JSON line per case: weights a second, µs per draw.
// Timing is the wall clock around N draws and a glFinish, best of 4 rounds.
#include <GLES3/gl3.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "platform/native/egl_context.h"
#include "util/error.h"

namespace {

using gpt2::fail;

enum class Weights { None, Int4, Int4Wide, Int8, HalfPairs, Half, Snorm8, Unorm4 };

struct WeightFormat {
    GLenum internal, format, type;
    int texelsPerIteration;  // fetches of one iteration, one texture row each
    int bytesPerTexel;
    bool integer;
};

WeightFormat formatOf(Weights w) {
    switch (w) {
        case Weights::Int4: return {GL_RG32UI, GL_RG_INTEGER, GL_UNSIGNED_INT, 1, 8, true};
        case Weights::Int4Wide: return {GL_RGBA32UI, GL_RGBA_INTEGER, GL_UNSIGNED_INT, 1, 16, true};
        case Weights::Int8: return {GL_RGBA32UI, GL_RGBA_INTEGER, GL_UNSIGNED_INT, 1, 16, true};
        case Weights::HalfPairs: return {GL_RGBA32UI, GL_RGBA_INTEGER, GL_UNSIGNED_INT, 2, 16, true};
        case Weights::Half: return {GL_RGBA16F, GL_RGBA, GL_HALF_FLOAT, 4, 8, false};
        case Weights::Snorm8: return {GL_RGBA8_SNORM, GL_RGBA, GL_BYTE, 4, 4, false};
        case Weights::Unorm4: return {GL_RGBA4, GL_RGBA, GL_UNSIGNED_SHORT_4_4_4_4, 4, 2, false};
        case Weights::None: break;
    }
    return {0, 0, 0, 0, 0, false};
}

// A loop body: `r` is the iteration's first texture row, `a` the input texel, `acc` the sums.
struct LoopCase {
    const char* name;
    Weights weights;
    const char* body;
    int weightsPerIteration = 16;
};

// Unpacking as the engine's shaders do (shaders/fetch.glsl), and the alternatives measured beside it.
const char* kHelpers = R"(
vec4 nibbles(uint b) { return vec4((uvec4(b) >> uvec4(0u, 4u, 8u, 12u)) & 15u); }
vec4 halves(uvec2 h) { return vec4(unpackHalf2x16(h.x), unpackHalf2x16(h.y)); }
vec4 signedBytes(uint v) { return vec4((ivec4(v) << ivec4(24, 16, 8, 0)) >> 24); }
// Codes as halves: each nibble ORed into the mantissa of the half 1024.
vec4 halfNibbles(uint b) {
    return vec4(unpackHalf2x16((b & 0x000F000Fu) | 0x64006400u), unpackHalf2x16(((b >> 4u) & 0x000F000Fu) | 0x64006400u)) - 1024.0;
}
)";

// Four texels whose components the sampler turns into floats (RGBA16F, RGBA8_SNORM, RGBA4).
const char* kFourFloatTexels =
    "acc += mat4(texelFetch(u_tex, ivec2(p.x, r), 0), texelFetch(u_tex, ivec2(p.x, r + 1), 0), texelFetch(u_tex, "
    "ivec2(p.x, r + 2), 0), texelFetch(u_tex, ivec2(p.x, r + 3), 0)) * a; a = a.yzwx;";

#define W4(f, u) mat4(f(u.x), f(u.x >> 16u), f(u.y), f(u.y >> 16u))
#define STR(...) #__VA_ARGS__
#define XSTR(...) STR(__VA_ARGS__)

const LoopCase kLoopCases[] = {
    {"fma only", Weights::None, "acc += mat4(a, a.yzwx, a.zwxy, a.wxyz) * a.wzyx; a = a * 0.9999 + 1e-4;"},
    {"4-bit unpack only", Weights::None,
     "uvec4 q = floatBitsToUint(a); acc += mat4(nibbles(q.x) * u_s + u_o, nibbles(q.y) * u_s + u_o, nibbles(q.z) * "
     "u_s + u_o, nibbles(q.w) * u_s + u_o) * a; a = a * 0.9999 + 1e-4;"},
    {"4-bit RG32UI fetch only", Weights::Int4, "acc.xy += uintBitsToFloat(texelFetch(u_bits, ivec2(p.x, r), 0).xy);"},
    {"4-bit RG32UI", Weights::Int4,
     "uvec2 u = texelFetch(u_bits, ivec2(p.x, r), 0).xy; acc += mat4(nibbles(u.x) * u_s + u_o, nibbles(u.x >> 16u) * "
     "u_s + u_o, nibbles(u.y) * u_s + u_o, nibbles(u.y >> 16u) * u_s + u_o) * a; a = a.yzwx;"},
    {"4-bit RG32UI, scaled once a block", Weights::Int4,
     "uvec2 u = texelFetch(u_bits, ivec2(p.x, r), 0).xy; accq += " XSTR(
         W4(nibbles, u)) " * a; a = a.yzwx; "
                         "if ((j & 7) == 7) { acc += accq * u_s + u_o; accq = vec4(0.0); }"},
    {"4-bit RGBA32UI (32 codes), scaled once a block", Weights::Int4Wide,
     "uvec4 u = texelFetch(u_bits, ivec2(p.x, r), 0); accq += " XSTR(W4(nibbles, u)) " * a + " XSTR(
         W4(nibbles, u.zwxy)) " * a.yzwx; a = a.zwxy; if ((j & 3) == 3) { acc += accq * u_s + u_o; accq = vec4(0.0); }",
     32},
    {"4-bit RGBA32UI (32 codes) as halves, scaled once a block", Weights::Int4Wide,
     "uvec4 u = texelFetch(u_bits, ivec2(p.x, r), 0); accq += mat4(halfNibbles(u.x), halfNibbles(u.y), "
     "halfNibbles(u.z), halfNibbles(u.w)) * a + mat4(halfNibbles(u.x >> 8u), halfNibbles(u.y >> 8u), "
     "halfNibbles(u.z >> 8u), halfNibbles(u.w >> 8u)) * a.yzwx; a = a.zwxy; "
     "if ((j & 3) == 3) { acc += accq * u_s + u_o; accq = vec4(0.0); }",
     32},
    {"int8 RGBA32UI", Weights::Int8,
     "uvec4 v = texelFetch(u_bits, ivec2(p.x, r), 0); acc += mat4(signedBytes(v.x), signedBytes(v.y), "
     "signedBytes(v.z), signedBytes(v.w)) * a; a = a.yzwx;"},
    {"RGBA32UI fetch only", Weights::Int8, "acc += uintBitsToFloat(texelFetch(u_bits, ivec2(p.x, r), 0));"},
    {"fp16 row pairs", Weights::HalfPairs,
     "uvec4 u0 = texelFetch(u_bits, ivec2(p.x, r), 0), u1 = texelFetch(u_bits, ivec2(p.x, r + 1), 0); "
     "acc += mat4(halves(u0.xy), halves(u0.zw), halves(u1.xy), halves(u1.zw)) * a; a = a.yzwx;"},
    {"fp16 row pairs fetch only", Weights::HalfPairs,
     "acc += uintBitsToFloat(texelFetch(u_bits, ivec2(p.x, r), 0)) + uintBitsToFloat(texelFetch(u_bits, ivec2(p.x, "
     "r + 1), 0));"},
    {"RGBA16F", Weights::Half, kFourFloatTexels},
    {"RGBA8_SNORM", Weights::Snorm8, kFourFloatTexels},
    {"RGBA4", Weights::Unorm4, kFourFloatTexels},
};

const char* kVertex = R"(#version 300 es
flat out int v_instance;
void main() {
    v_instance = gl_InstanceID;
    gl_Position = vec4(vec2((gl_VertexID << 1) & 2, gl_VertexID & 2) * 2.0 - 1.0, 0.0, 1.0);
}
)";

// `iterations` and the fragment's `instance`, `col` (its texture column) and rows are the case's.
std::string fragmentSource(int iterations, const std::string& place, const std::string& body) {
    return "#version 300 es\nprecision highp float;\nprecision highp int;\nprecision highp usampler2D;\n"
           "uniform highp usampler2D u_bits;\nuniform highp sampler2D u_tex;\nuniform vec4 u_s, u_o;\n"
           "flat in int v_instance;\nlayout(location = 0) out vec4 o_color;\n" +
           std::string(kHelpers) +
           "void main() {\n    ivec2 p = ivec2(gl_FragCoord.xy);\n    vec4 acc = vec4(0.0), accq = vec4(0.0);\n"
           "    vec4 a = vec4(gl_FragCoord.xyxy) * 1e-3 + u_o;\n" +
           place + "    for (int j = 0; j < " + std::to_string(iterations) + "; ++j) {\n        int r = (base + j) * " +
           "ROWS;\n        " + body + "\n    }\n    o_color = acc + accq;\n}\n";
}

GLuint compile(GLenum type, const std::string& source) {
    GLuint s = glCreateShader(type);
    const char* text = source.c_str();
    glShaderSource(s, 1, &text, nullptr);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[4096];
        glGetShaderInfoLog(s, sizeof log, nullptr, log);
        fail("fragment_rates: a shader did not compile: ", log, "\n", source);
    }
    return s;
}

class Program {
public:
    Program(const std::string& fragment) : id_(glCreateProgram()) {
        GLuint vs = compile(GL_VERTEX_SHADER, kVertex), fs = compile(GL_FRAGMENT_SHADER, fragment);
        glAttachShader(id_, vs);
        glAttachShader(id_, fs);
        glLinkProgram(id_);
        glDeleteShader(vs);
        glDeleteShader(fs);
        glUseProgram(id_);
        glUniform1i(glGetUniformLocation(id_, "u_bits"), 0);
        glUniform1i(glGetUniformLocation(id_, "u_tex"), 1);
        glUniform4f(glGetUniformLocation(id_, "u_s"), 0.01f, 0.02f, 0.03f, 0.04f);
        glUniform4f(glGetUniformLocation(id_, "u_o"), 0.1f, 0.2f, 0.3f, 0.4f);
    }
    ~Program() { glDeleteProgram(id_); }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;

private:
    GLuint id_;
};

class Texture {
public:
    // Texels of `w`'s format, bound to unit 0 (integer formats) or 1.
    Texture(Weights w, int width, int height) {
        const WeightFormat f = formatOf(w);
        glGenTextures(1, &id_);
        glActiveTexture(f.integer ? GL_TEXTURE0 : GL_TEXTURE1);
        glBindTexture(GL_TEXTURE_2D, id_);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        std::mt19937 rng(7);
        std::vector<std::uint16_t> bits(std::size_t(width) * height * f.bytesPerTexel / 2);
        // Halves in [0.125, 0.5) with either sign, whose bits serve every format: no NaN, infinity or
        // subnormal where they are read as halves.
        for (auto& b : bits) b = std::uint16_t(0x3000u | (rng() & 0x8fffu));
        glTexImage2D(GL_TEXTURE_2D, 0, f.internal, width, height, 0, f.format, f.type, bits.data());
        if (glGetError() != GL_NO_ERROR) fail("fragment_rates: a ", width, " x ", height, " texture was refused");
    }
    ~Texture() { glDeleteTextures(1, &id_); }
    Texture(const Texture&) = delete;
    Texture& operator=(const Texture&) = delete;

private:
    GLuint id_ = 0;
};

class Target {
public:
    Target(int width, int height) {
        glActiveTexture(GL_TEXTURE2);  // units 0 and 1 hold the weights
        glGenTextures(1, &texture_);
        glBindTexture(GL_TEXTURE_2D, texture_);
        glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA32F, width, height);
        glGenFramebuffers(1, &framebuffer_);
        glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_);
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, texture_, 0);
        glViewport(0, 0, width, height);
    }
    ~Target() {
        glDeleteFramebuffers(1, &framebuffer_);
        glDeleteTextures(1, &texture_);
    }
    Target(const Target&) = delete;
    Target& operator=(const Target&) = delete;

private:
    GLuint texture_ = 0, framebuffer_ = 0;
};

// Seconds per draw of `instances` instances, best of 4 rounds of `draws` draws.
double secondsPerDraw(int draws, int instances) {
    double best = 1e30;
    for (int round = 0; round < 5; ++round) {
        glFinish();
        const auto t0 = std::chrono::steady_clock::now();
        for (int d = 0; d < draws; ++d) glDrawArraysInstanced(GL_TRIANGLES, 0, 3, instances);
        glFinish();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (round > 0 && s < best) best = s;  // round 0 compiles and warms up
    }
    return best / draws;
}

void report(const char* kind, const std::string& name, double weights, double seconds) {
    std::printf("{\"%s\":\"%s\",\"g_weights_per_s\":%.1f,\"us_per_draw\":%.1f,\"gl_error\":%d}\n", kind, name.c_str(),
                weights / seconds / 1e9, seconds * 1e6, int(glGetError()));
    std::fflush(stdout);
}

void loopCases(int draws) {
    constexpr int kWidth = 512, kHeight = 128, kIterations = 32;
    Target target(kWidth, kHeight);
    for (const LoopCase& c : kLoopCases) {
        const int rows = std::max(1, formatOf(c.weights).texelsPerIteration);
        const Texture weights(c.weights == Weights::None ? Weights::Int4 : c.weights, kWidth,
                              kHeight * kIterations * rows);
        const Program program(fragmentSource(kIterations,
                                             "    const int ROWS = " + std::to_string(rows) +
                                                 ";\n    int base = p.y * " + std::to_string(kIterations) + ";\n",
                                             c.body));
        const double weightsPerDraw = double(kWidth) * kHeight * kIterations * c.weightsPerIteration;
        report("loop", c.name, weightsPerDraw, secondsPerDraw(draws, 1));
    }
}

// 1,600 output texels (lines of 32), 160 instances of 8 input texels (RG32UI 4-bit codes): drawn as
// one draw whose rows hold every instance's texels, or instanced into the same texels.
void blendCases(int draws) {
    constexpr int kLines = 50, kWidth = 32, kInstances = 160, kIterations = 8;
    const Texture codes(Weights::Int4, kLines * kWidth, kInstances * kIterations);
    const std::string fetchOnly = "acc.xy += uintBitsToFloat(texelFetch(u_bits, ivec2(col, r), 0).xy);";
    for (const bool blended : {false, true}) {
        for (const bool instanced : {false, true}) {
            Target target(kWidth, instanced ? kLines : kLines * kInstances);
            const Program program(fragmentSource(
                kIterations,
                instanced ? "    const int ROWS = 1;\n    int base = v_instance * 8; int col = p.y * 32 + p.x;\n"
                          : "    const int ROWS = 1;\n    int base = p.y / 50 * 8; int col = p.y % 50 * 32 + p.x;\n",
                fetchOnly));
            if (blended) {
                glEnable(GL_BLEND);
                glBlendFunc(GL_ONE, GL_ONE);
            } else {
                glDisable(GL_BLEND);
            }
            const double weightsPerDraw = double(kLines * kWidth) * kInstances * kIterations * 16;
            report("blend",
                   std::string(instanced ? "instanced" : "one draw") + (blended ? ", blended" : ", overwriting"),
                   weightsPerDraw, secondsPerDraw(draws, instanced ? kInstances : 1));
        }
    }
    glDisable(GL_BLEND);
}

}  // namespace

int main(int argc, char** argv) {
    int draws = 50;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--draws") == 0 && i + 1 < argc) {
            draws = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: fragment_rates [--draws N]\n");
            return 2;
        }
    }
    try {
        gpt2::EglContext context;
        GLuint vao = 0;
        glGenVertexArrays(1, &vao);
        glBindVertexArray(vao);
        std::printf("{\"renderer\":\"%s\"}\n", reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
        loopCases(draws);
        blendCases(draws);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
