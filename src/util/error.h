#pragma once
// One error type for the whole engine. Messages say what failed and what to do about it.
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

}  // namespace gpt2
