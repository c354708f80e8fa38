#pragma once
// Shader text, embedded from shaders/ at build time (cmake/EmbedShaders.cmake).
#include <map>
#include <string>

namespace gpt2 {

const std::map<std::string, std::string>& embeddedShaders();

// A shader composed of files (ops choose variants by the includes they put before a shader's main
// file): "a.glsl+b.glsl+main.frag" is their texts in that order.
constexpr char kShaderPartSeparator = '+';

// The text of the shader `name` (one file of shaders/, or files joined by kShaderPartSeparator) with
// `#version 300 es` and the given #define lines first and every `#include "file"` line replaced by
// that file's text (once per file in the whole shader).
std::string shaderSource(const std::string& name, const std::string& defines);

// The file of a composed shader that has its main(): the last one.
std::string shaderMainFile(const std::string& name);

}  // namespace gpt2
