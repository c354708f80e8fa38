#pragma once
// A Pass is one fragment program drawn as ONE fullscreen triangle per output page, with its inputs,
// uniforms and output textures fixed when it is declared. The model declares each pass once at load
// time and only changes the row range (and a few uniforms such as the position) per run.
#include <string>
#include <vector>

#include <glm/vec2.hpp>
#include <glm/vec4.hpp>

#include "gl/framebuffer.h"
#include "gl/program.h"
#include "gl/texture.h"

namespace gpt2 {

// Draw calls made by all passes since the process started (benchmarks report passes per token).
long long passDraws();

class Pass {
public:
    // All outputs must share one layout; more than one output draws to multiple render targets.
    Pass(Program& program, std::vector<Texture*> outputs);

    // Binds `texture` to the sampler uniform `name` and its layout to `name`_layout.
    Pass& input(const std::string& name, const Texture& texture);
    Pass& set(const std::string& name, int value);
    Pass& set(const std::string& name, float value);
    Pass& set(const std::string& name, glm::ivec2 value);

    // Renders logical rows [rowBegin, rowEnd) of the outputs; other rows keep their contents.
    void run(int rowBegin, int rowEnd);

private:
    struct Uniform {
        GLint location;
        int kind;  // 0 int, 1 float, 2 ivec2, 3 ivec4
        glm::ivec4 ints{0};
        float real = 0;
    };
    Uniform& slot(const std::string& name, int kind);
    const Framebuffer& framebuffer(int page);

    Program* program_;
    std::vector<Texture*> outputs_;
    std::vector<std::pair<GLint, const Texture*>> inputs_;
    std::vector<Uniform> uniforms_;
    std::vector<Framebuffer> framebuffers_;  // multiple-render-target passes only
};

}  // namespace gpt2
