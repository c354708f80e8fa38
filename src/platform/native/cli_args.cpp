#include "platform/native/cli_args.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "util/error.h"

namespace gpt2 {
namespace {

long parseLong(const std::string& text, const std::string& what) {
    const auto value = parseInt(text);
    if (!value) fail(what, ": \"", text, "\" is not an integer");
    return *value;
}

}  // namespace

std::optional<int> parseInt(const std::string& text) {
    errno = 0;
    char* end = nullptr;
    const long value = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || value < -2147483647L || value > 2147483647L)
        return std::nullopt;
    return int(value);
}

CliArgs::CliArgs(int argc, char** argv, const std::vector<std::string>& allowed, const std::string& usage)
    : CliArgs(argc, argv, usage) {
    for (const std::string& flag : flags())
        if (std::find(allowed.begin(), allowed.end(), flag) == allowed.end())
            fail("unknown flag ", flag, " for command ", command_);
}

CliArgs::CliArgs(int argc, char** argv, const std::string& usage) {
    if (argc < 2) fail(usage);
    command_ = argv[1];
    for (int i = 2; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag.rfind("--", 0) != 0) fail("unexpected argument \"", flag, "\"; flags look like --model DIR");
        if (i + 1 >= argc) fail("flag ", flag, " needs a value");
        if (!has(flag)) given_.push_back(flag);
        values_[flag] = argv[++i];
        ordered_.emplace_back(flag, values_[flag]);
    }
}

std::string CliArgs::text(const std::string& flag) const {
    auto it = values_.find(flag);
    if (it == values_.end()) fail("missing required flag ", flag);
    return it->second;
}

int CliArgs::integer(const std::string& flag, int fallback) const {
    auto it = values_.find(flag);
    return it == values_.end() ? fallback : int(parseLong(it->second, flag));
}

std::vector<int> CliArgs::ids(const std::string& flag) const {
    const std::string list = text(flag);
    std::vector<int> ids;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        ids.push_back(int(parseLong(list.substr(start, comma - start), flag)));
        start = comma + 1;
    }
    return ids;
}

}  // namespace gpt2
