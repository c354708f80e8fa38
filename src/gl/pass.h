#pragma once
// A Pass is one fragment program drawn as ONE fullscreen triangle per output page, with its inputs,
// uniforms and output textures fixed when it is declared. The model declares each pass once at load
// time and only changes the row range (and a few uniforms such as the position) per run.
#include <string>
#include <vector>

#include <glm/vec2.hpp>
#include <glm/vec4.hpp>

#include "gl/framebuffer.h"
#include "gl/pass_profiler.h"
#include "gl/program.h"
#include "gl/texture.h"

namespace gpt2 {

// (sampler uniform name, texture) for each input of a pass.
using PassInputs = std::vector<std::pair<std::string, const Texture*>>;

class Pass {
public:
    // All outputs must share one layout; more than one output draws to multiple render targets.
    // Outputs are RGBA32F, or a single one of fp16 row pairs (TexelFormat::HalfPairs, unblended): the
    // shader then gets PAIR_OUTPUT and writes both rows of a pair per fragment (row_output.glsl).
    // Each input is declared for the shader as the sampler uniform `name` of its format's type, with
    // its layout compiled in as the constant `name`_layout (so passes over textures of the same
    // shapes and formats share one program variant).
    // `instances` > 1 draws that many copies of the triangle (the shader reads its copy as
    // v_instance) and adds their results by blending into the cleared output rows: split-K. It
    // needs EXT_float_blend and output rows of whole lines (clearing a row must not touch others).
    // `vertexShader` replaces the fullscreen triangle's plain vertex shader (it must draw the same
    // triangle); it sees the same inputs and defines.
    Pass(ProgramCache& programs, const std::string& shader, std::string defines, std::vector<Texture*> outputs,
         const PassInputs& inputs, int instances = 1,
         const std::string& vertexShader = ProgramCache::kFullscreenVertex);

    Pass& set(const std::string& name, int value);
    Pass& set(const std::string& name, float value);
    Pass& set(const std::string& name, glm::ivec2 value);

    // Runs of more rows than this fail (shaders that read the first row's inputs once per draw).
    void limitRowsPerRun(int rows) { maxRowsPerRun_ = rows; }
    // Each fragment writes `rows` consecutive rows of every output, through that many render targets
    // per output (output p's row first + s to target p * rows + s; `first` from outputCoord). The
    // outputs' rows must be interleaved over a multiple of `rows` pages, and each run must start and
    // end on a multiple of `rows`.
    void writeRowGroups(int rows);

    // Renders logical rows [rowBegin, rowEnd) of the outputs; other rows keep their contents, except
    // that an output of row pairs is written a pair at a time: the other row of a pair that the run
    // starts or ends in gets a copy of the run's first or last row.
    void run(int rowBegin, int rowEnd);

private:
    // Uniforms and inputs are kept by name until the first run, so declaring a pass never waits for
    // its program's link (Program::finish).
    enum class UniformKind { Int, Float, Ivec2 };
    struct Uniform {
        std::string name;
        GLint location;  // -1 until bound, or when the compiler dropped it (nothing to set)
        UniformKind kind;
        glm::ivec4 ints{0};
        float real = 0;
    };
    Uniform& slot(const std::string& name, UniformKind kind);
    void bind();
    // Fails, saying why, for a run the pass cannot draw.
    void checkRows(int rowBegin, int rowEnd) const;
    // The render targets of a draw into `layer` of the outputs (and the next ones for row groups).
    const Framebuffer& framebuffer(int layer);

    Program* program_;
    GLint outLayoutLocation_ = -1, rowsLocation_ = -1, pageLocation_ = -1;  // of common.glsl's uniforms, set every run
    int instances_;
    int maxRowsPerRun_ = 0;  // 0: any
    int groupRows_ = 1;      // rows written per fragment (writeRowGroups)
    std::vector<Texture*> outputs_;
    PassInputs declaredInputs_;                           // until bound
    std::vector<std::pair<int, const Texture*>> inputs_;  // (texture unit, texture)
    bool bound_ = false;
    std::vector<Uniform> uniforms_;
    std::vector<Framebuffer> framebuffers_;  // by layer, for multiple render targets only
};

}  // namespace gpt2
