#include "gl/shader_source.h"

#include <set>
#include <sstream>

#include "util/error.h"

namespace gpt2 {
namespace {

const std::string& shaderText(const std::string& name) {
    const auto& shaders = embeddedShaders();
    auto it = shaders.find(name);
    if (it == shaders.end()) fail("shader ", name, " is not embedded; is it in shaders/?");
    return it->second;
}

void expand(const std::string& name, std::set<std::string>& included, std::ostringstream& out) {
    std::istringstream in(shaderText(name));
    std::string line;
    while (std::getline(in, line)) {
        const auto start = line.find("#include \"");
        if (start != std::string::npos) {
            const auto end = line.find('"', start + 10);
            const std::string file = line.substr(start + 10, end - start - 10);
            if (included.insert(file).second) expand(file, included, out);
            continue;
        }
        out << line << '\n';
    }
}

}  // namespace

std::string shaderSource(const std::string& name, const std::string& defines) {
    std::ostringstream out;
    out << "#version 300 es\n" << defines;
    std::set<std::string> included;
    std::istringstream parts(name);
    std::string part;
    while (std::getline(parts, part, kShaderPartSeparator))
        if (included.insert(part).second) expand(part, included, out);
    return out.str();
}

std::string shaderMainFile(const std::string& name) { return name.substr(name.rfind(kShaderPartSeparator) + 1); }

}  // namespace gpt2
