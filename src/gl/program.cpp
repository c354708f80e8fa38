#include "gl/program.h"

#include <cstring>
#include <vector>

#include "gl/shader_source.h"
#include "util/error.h"

namespace gpt2 {
namespace {

GlObject compile(GLenum type, const std::string& source, const std::string& label) {
    GlObject shader = GlObject::shader(type);
    const char* text = source.c_str();
    glShaderSource(shader.get(), 1, &text, nullptr);
    glCompileShader(shader.get());
    GLint ok = 0;
    glGetShaderiv(shader.get(), GL_COMPILE_STATUS, &ok);
    if (!ok) {
        GLint length = 0;
        glGetShaderiv(shader.get(), GL_INFO_LOG_LENGTH, &length);
        std::vector<char> log(std::size_t(std::max(length, 1)));
        glGetShaderInfoLog(shader.get(), GLsizei(log.size()), nullptr, log.data());
        fail("compiling shader ", label, " failed: ", log.data());
    }
    return shader;
}

}  // namespace

Program::Program(const std::string& vertexName, const std::string& fragmentName, const std::string& defines)
    : label_(vertexName == ProgramCache::kFullscreenVertex ? fragmentName : vertexName + " + " + fragmentName),
      program_(GlObject::program()) {
    const GlObject vertex = compile(GL_VERTEX_SHADER, shaderSource(vertexName, defines), vertexName);
    const GlObject fragment = compile(GL_FRAGMENT_SHADER, shaderSource(fragmentName, defines), fragmentName);
    glAttachShader(program_.get(), vertex.get());
    glAttachShader(program_.get(), fragment.get());
    glLinkProgram(program_.get());
    glDetachShader(program_.get(), vertex.get());
    glDetachShader(program_.get(), fragment.get());
    GLint ok = 0;
    glGetProgramiv(program_.get(), GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[2048] = {};
        glGetProgramInfoLog(program_.get(), sizeof log, nullptr, log);
        fail("linking program ", label_, " failed: ", log);
    }
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
        if (type == GL_SAMPLER_2D_ARRAY || type == GL_UNSIGNED_INT_SAMPLER_2D_ARRAY) {
            const int unit = int(samplerUnits_.size());
            samplerUnits_[name] = unit;
            glUniform1i(location, unit);
        }
    }
    glUseProgram(0);
}

GLint Program::uniform(const std::string& name) const {
    auto it = uniforms_.find(name);
    return it == uniforms_.end() ? -1 : it->second;
}

int Program::samplerUnit(const std::string& name) const {
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
    auto& slot = programs_[vertexName + "\n" + fragmentName + "\n" + defines];
    if (!slot) slot = std::make_unique<Program>(vertexName, fragmentName, defines);
    return *slot;
}

}  // namespace gpt2
