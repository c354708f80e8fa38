#pragma once
// Shader text, embedded from shaders/ at build time (cmake/EmbedShaders.cmake).
#include <map>
#include <string>

namespace gpt2 {

const std::map<std::string, std::string>& embeddedShaders();

// The text of shaders/<name> with `#version 300 es` and the given #define lines first and every
// `#include "file"` line replaced by that file's text (once per file).
std::string shaderSource(const std::string& name, const std::string& defines);

}  // namespace gpt2
