#pragma once
// One error type for the whole engine. Messages say what failed and what to do about it.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <sstream>

namespace gpt2 {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Builds a message from any streamable parts: fail("tensor ", name, " has ", n, " rows").
template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
    std::ostringstream out;
    (out << ... << parts);
    throw Error(out.str());
}

// "1,634.2 MB": what a reader compares at a glance.
inline std::string megabytes(std::int64_t bytes) {
    const std::int64_t tenths = (bytes + 50'000) / 100'000;
    const std::string whole = std::to_string(tenths / 10);
    std::string grouped;
    for (std::size_t i = 0; i < whole.size(); ++i) {
        if (i > 0 && (whole.size() - i) % 3 == 0) grouped += ',';
        grouped += whole[i];
    }
    return grouped + "." + std::to_string(tenths % 10) + " MB";
}

}  // namespace gpt2
