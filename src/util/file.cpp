#include "util/file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

#include "util/error.h"

namespace gpt2 {

std::vector<std::uint8_t> readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) fail(path, ": cannot open (", std::strerror(errno), ")");
    const std::streamsize size = in.tellg();
    if (size < 0) fail(path, ": cannot determine the file size");
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
    in.seekg(0);
    if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size))
        fail(path, ": read failed after ", in.gcount(), " of ", size, " bytes");
    return bytes;
}

std::string readTextFile(const std::string& path) {
    const auto bytes = readFile(path);
    return std::string(bytes.begin(), bytes.end());
}

bool fileExists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string joinPath(const std::string& dir, const std::string& name) {
    if (dir.empty()) return name;
    return dir.back() == '/' ? dir + name : dir + "/" + name;
}

}  // namespace gpt2
