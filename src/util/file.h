#pragma once
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "util/error.h"

namespace gpt2 {

// Reads a whole file; throws Error naming the path when it cannot be opened or read.
std::vector<std::uint8_t> readFile(const std::string& path);
std::string readTextFile(const std::string& path);
bool fileExists(const std::string& path);
std::string joinPath(const std::string& dir, const std::string& name);

// The header of a file whose header has no length field (GGUF's), parsed from growing prefixes of
// `stream` until `parse(bytes, size, fileSize)` returns one (it returns an optional, empty while the
// bytes end inside the header).
template <typename Parse>
auto readHeader(std::ifstream& stream, const std::string& path, const Parse& parse) {
    if (!stream) fail(path, ": cannot open the file");
    stream.seekg(0, std::ios::end);
    const auto fileSize = std::uint64_t(stream.tellg());
    std::vector<std::uint8_t> prefix;
    for (std::uint64_t size = 1 << 20;; size *= 4) {
        prefix.resize(std::size_t(std::min(size, fileSize)));
        stream.clear();
        stream.seekg(0);
        if (!stream.read(reinterpret_cast<char*>(prefix.data()), std::streamsize(prefix.size())))
            fail(path, ": cannot read the file's first ", prefix.size(), " bytes");
        if (auto header = parse(prefix.data(), prefix.size(), fileSize)) return std::move(*header);
    }
}

}  // namespace gpt2
