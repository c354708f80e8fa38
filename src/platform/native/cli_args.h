#pragma once
// Command-line parsing for the `gpt2` tool: `gpt2 COMMAND --flag value ...`.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpt2 {

// `text` as a decimal int; nothing where it is not one whole (or out of int's range).
std::optional<int> parseInt(const std::string& text);

class CliArgs {
public:
    // Throws Error for a flag without a value or a flag not in `allowed`; `usage` when there are no arguments.
    CliArgs(int argc, char** argv, const std::vector<std::string>& allowed, const std::string& usage);
    // Takes any flag: the caller checks flags() against what the command takes.
    CliArgs(int argc, char** argv, const std::string& usage);
    const std::string& command() const { return command_; }
    bool has(const std::string& flag) const { return values_.count(flag) != 0; }
    std::string text(const std::string& flag) const;  // required
    int integer(const std::string& flag, int fallback) const;
    std::vector<int> ids(const std::string& flag) const;       // "15496,11,616"
    std::vector<std::string> flags() const { return given_; }  // the flags given, in order
    // Every (flag, value) given, in order: a flag given again is there again (text() reads its last).
    const std::vector<std::pair<std::string, std::string>>& given() const { return ordered_; }

private:
    std::string command_;
    std::map<std::string, std::string> values_;
    std::vector<std::string> given_;
    std::vector<std::pair<std::string, std::string>> ordered_;
};

}  // namespace gpt2
