#pragma once
// A linked program (a fullscreen-triangle vertex shader, shaders/fullscreen.vert unless a pass names
// another, + one fragment shader) with every active uniform located once, and the cache that compiles
// each variant once. Compiling and linking are only issued when a program is made; nothing asks for
// their results until finish(), so a driver with KHR_parallel_shader_compile links all of a model's
// programs at once while its weights stream in, and the thread never waits on one (linked()).
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "gl/gl_objects.h"

namespace gpt2 {

class Program {
public:
    // Both shaders get the same `defines`.
    Program(const std::string& vertexName, const std::string& fragmentName, const std::string& defines);
    // A program that is never built: what a cache that only plans (ProgramCache::Planning) hands out.
    struct Unbuilt {};
    explicit Program(Unbuilt) : label_("a planned pass (never built)") {}
    GLuint id() const { return program_.get(); }
    const std::string& label() const { return label_; }
    // Whether the driver has finished linking (GL_COMPLETION_STATUS_KHR); never waits. Without the
    // extension the answer is always yes, and finish() waits instead.
    bool linked(bool parallelCompile) const;
    // Checks the link (a failure names the shader and its log) and locates the uniforms; waits for
    // the driver if it is still linking. Idempotent; uniform() and samplerUnit() call it.
    void finish();
    // -1 when the shader has no such active uniform (the compiler may drop unused ones).
    GLint uniform(const std::string& name);
    // The texture unit of a sampler uniform, fixed at link time (-1 when it is not active): passes
    // bind their inputs to these units and never set sampler uniforms per draw.
    int samplerUnit(const std::string& name);

    // Set a uniform of this program, which must be in use, skipping the GL call when it already
    // holds the value: the passes of every layer share one program and mostly set the same values,
    // and each GL call costs driver (and, in browsers, WebGL validation) time per draw.
    void setInt(GLint location, int value);
    void setFloat(GLint location, float value);
    void setIvec2(GLint location, int x, int y);
    void setIvec4(GLint location, int x, int y, int z, int w);

private:
    using Value = std::array<std::int32_t, 4>;
    bool changes(GLint location, const Value& value);

    std::string label_;
    std::string shaders_;  // every file of both shaders, for errors
    GlObject program_;
    GlObject vertex_, fragment_;  // until finish(): their logs explain a failed link
    bool finished_ = false;
    std::map<std::string, GLint> uniforms_;
    std::map<std::string, int> samplerUnits_;
    std::map<GLint, Value> values_;
};

class ProgramCache {
public:
    static constexpr const char* kFullscreenVertex = "fullscreen.vert";
    // Planning: get() compiles nothing and hands out one unbuilt program, for a model that is declared
    // to count its textures and never runs (Engine::plannedGpuBytes).
    enum class Mode { Building, Planning };
    // `commonDefines`: lines every program gets before its own, traits of the context that shaders
    // choose by (HALF_NIBBLES, Tuning::halfNibbles).
    explicit ProgramCache(Mode mode = Mode::Building, std::string commonDefines = "")
        : mode_(mode), commonDefines_(std::move(commonDefines)) {}
    // `defines` is a block of "#define X Y\n" lines; each (shaders, defines) compiles once.
    Program& get(const std::string& fragmentName, const std::string& defines = "",
                 const std::string& vertexName = kFullscreenVertex);
    std::size_t size() const { return programs_.size(); }
    // Every program made so far, by what it was made from (vertex shader, fragment shader and
    // defines, a line each before the defines): for tools that read what the driver made of them.
    const std::map<std::string, std::unique_ptr<Program>>& all() const { return programs_; }
    // Program::linked and Program::finish for every program made so far.
    bool linked(bool parallelCompile) const;
    void finish();

private:
    Mode mode_;
    std::string commonDefines_;
    std::map<std::string, std::unique_ptr<Program>> programs_;
};

}  // namespace gpt2
