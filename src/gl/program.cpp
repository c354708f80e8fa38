#include "gl/program.h"

#include <cstring>
#include <vector>

#include "gl/shader_source.h"
#include "util/error.h"

namespace gpt2 {
namespace {

// Not defined by GLES 3.0 headers: KHR_parallel_shader_compile's query.
#ifndef GL_COMPLETION_STATUS_KHR
#define GL_COMPLETION_STATUS_KHR 0x91B1
#endif

GlObject compile(GLenum type, const std::string& source) {
    GlObject shader = GlObject::shader(type);
    const char* text = source.c_str();
    glShaderSource(shader.get(), 1, &text, nullptr);
    glCompileShader(shader.get());
    return shader;
}

std::string shaderLog(const GlObject& shader) {
    GLint ok = 0;
    glGetShaderiv(shader.get(), GL_COMPILE_STATUS, &ok);
    if (ok) return "";
    GLint length = 0;
    glGetShaderiv(shader.get(), GL_INFO_LOG_LENGTH, &length);
    std::vector<char> log(std::size_t(std::max(length, 1)));
    glGetShaderInfoLog(shader.get(), GLsizei(log.size()), nullptr, log.data());
    return log.data();
}

}  // namespace

Program::Program(const std::string& vertexName, const std::string& fragmentName, const std::string& defines)
    // Labels (in errors and profiles) name the main files; the defines and includes tell variants apart.
    : label_(vertexName == ProgramCache::kFullscreenVertex
                 ? shaderMainFile(fragmentName)
                 : shaderMainFile(vertexName) + " + " + shaderMainFile(fragmentName)),
      shaders_(vertexName + " + " + fragmentName),
      program_(GlObject::program()),
      vertex_(compile(GL_VERTEX_SHADER, shaderSource(vertexName, defines))),
      fragment_(compile(GL_FRAGMENT_SHADER, shaderSource(fragmentName, defines))) {
    glAttachShader(program_.get(), vertex_.get());
    glAttachShader(program_.get(), fragment_.get());
    glLinkProgram(program_.get());
}

bool Program::linked(bool parallelCompile) const {
    if (finished_ || !parallelCompile) return true;
    GLint done = GL_FALSE;
    glGetProgramiv(program_.get(), GL_COMPLETION_STATUS_KHR, &done);
    return done == GL_TRUE;
}

void Program::finish() {
    if (finished_) return;
    GLint ok = 0;
    glGetProgramiv(program_.get(), GL_LINK_STATUS, &ok);
    if (!ok) {
        const std::string vertexLog = shaderLog(vertex_), fragmentLog = shaderLog(fragment_);
        if (!vertexLog.empty()) fail("compiling the vertex shader of ", shaders_, " failed: ", vertexLog);
        if (!fragmentLog.empty()) fail("compiling the fragment shader of ", shaders_, " failed: ", fragmentLog);
        char log[2048] = {};
        glGetProgramInfoLog(program_.get(), sizeof log, nullptr, log);
        fail("linking program ", shaders_, " failed: ", log);
    }
    glDetachShader(program_.get(), vertex_.get());
    glDetachShader(program_.get(), fragment_.get());
    vertex_.reset();
    fragment_.reset();
    GLint count = 0;
    glGetProgramiv(program_.get(), GL_ACTIVE_UNIFORMS, &count);
    glUseProgram(program_.get());
    for (GLint i = 0; i < count; ++i) {
        char name[256] = {};
        GLint size = 0;
        GLenum type = 0;
        glGetActiveUniform(program_.get(), GLuint(i), sizeof name, nullptr, &size, &type, name);
        const GLint location = glGetUniformLocation(program_.get(), name);
        uniforms_[name] = location;
        if (type == GL_SAMPLER_2D_ARRAY || type == GL_UNSIGNED_INT_SAMPLER_2D_ARRAY ||
            type == GL_INT_SAMPLER_2D_ARRAY) {
            const int unit = int(samplerUnits_.size());
            samplerUnits_[name] = unit;
            glUniform1i(location, unit);
        }
    }
    glUseProgram(0);
    finished_ = true;
}

GLint Program::uniform(const std::string& name) {
    finish();
    auto it = uniforms_.find(name);
    return it == uniforms_.end() ? -1 : it->second;
}

int Program::samplerUnit(const std::string& name) {
    finish();
    auto it = samplerUnits_.find(name);
    return it == samplerUnits_.end() ? -1 : it->second;
}

bool Program::changes(GLint location, const Value& value) {
    if (location == -1) return false;
    auto [it, inserted] = values_.try_emplace(location, value);
    if (!inserted && it->second == value) return false;
    it->second = value;
    return true;
}

void Program::setInt(GLint location, int value) {
    if (changes(location, {value, 0, 0, 0})) glUniform1i(location, value);
}

void Program::setFloat(GLint location, float value) {
    std::int32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    if (changes(location, {bits, 0, 0, 0})) glUniform1f(location, value);
}

void Program::setIvec2(GLint location, int x, int y) {
    if (changes(location, {x, y, 0, 0})) glUniform2i(location, x, y);
}

void Program::setIvec4(GLint location, int x, int y, int z, int w) {
    if (changes(location, {x, y, z, w})) glUniform4i(location, x, y, z, w);
}

Program& ProgramCache::get(const std::string& fragmentName, const std::string& defines, const std::string& vertexName) {
    auto& slot = programs_[mode_ == Mode::Planning ? "" : vertexName + "\n" + fragmentName + "\n" + defines];
    if (!slot)
        slot = mode_ == Mode::Planning ? std::make_unique<Program>(Program::Unbuilt{})
                                       : std::make_unique<Program>(vertexName, fragmentName, commonDefines_ + defines);
    return *slot;
}

bool ProgramCache::linked(bool parallelCompile) const {
    for (const auto& [key, program] : programs_)
        if (!program->linked(parallelCompile)) return false;
    return true;
}

void ProgramCache::finish() {
    for (auto& [key, program] : programs_) program->finish();
}

}  // namespace gpt2
