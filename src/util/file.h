#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpt2 {

// Reads a whole file; throws Error naming the path when it cannot be opened or read.
std::vector<std::uint8_t> readFile(const std::string& path);
std::string readTextFile(const std::string& path);
bool fileExists(const std::string& path);
std::string joinPath(const std::string& dir, const std::string& name);

}  // namespace gpt2
