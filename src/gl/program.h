#pragma once
// A linked program (the shared fullscreen-triangle vertex shader + one fragment shader) with every
// active uniform located once at link time, and the cache that compiles each variant once.
#include <map>
#include <memory>
#include <string>

#include "gl/gl_objects.h"

namespace gpt2 {

class Program {
public:
    Program(const std::string& fragmentName, const std::string& defines);
    GLuint id() const { return program_.get(); }
    const std::string& label() const { return label_; }
    // -1 when the shader has no such active uniform (the compiler may drop unused ones).
    GLint uniform(const std::string& name) const;

private:
    std::string label_;
    GlObject program_;
    std::map<std::string, GLint> uniforms_;
};

class ProgramCache {
public:
    // `defines` is a block of "#define X Y\n" lines; each (shader, defines) pair compiles once.
    Program& get(const std::string& fragmentName, const std::string& defines = "");
    std::size_t size() const { return programs_.size(); }

private:
    std::map<std::string, std::unique_ptr<Program>> programs_;
};

}  // namespace gpt2
