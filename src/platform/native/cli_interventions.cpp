#include "platform/native/cli_interventions.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/file.h"

namespace gpt2 {

const char* const kInterventionHelp =
    "  --ablate-head L.H  zero head H of block L (its output, before attn.c_proj)\n"
    "  --ablate-neurons L:I,J,...  zero those MLP hidden units of block L after the activation\n"
    "  --steer L:FILE:SCALE  add SCALE times FILE's vector (a JSON array of n_embd numbers) to the residual\n"
    "                     stream after block L, at every position\n"
    "  --patch L:POS:FILE  replace the residual stream after block L at position POS with FILE's vector\n"
    "Each may be given more than once; they apply in the order given (docs/api.md, \"Interventions\").\n";

const std::vector<std::string>& interventionFlags() {
    static const std::vector<std::string> flags = {"--ablate-head", "--ablate-neurons", "--steer", "--patch"};
    return flags;
}

namespace {

// One flag's value, read piece by piece; errors quote the flag, its value and its form.
class Value {
public:
    Value(std::string flag, std::string text, const char* form)
        : flag_(std::move(flag)), text_(std::move(text)), form_(form) {}

    // The text up to the next `separator`, taken.
    std::string upTo(char separator) { return take(rest().find(separator)); }
    // The text before the last `separator`, taken; what follows it is left.
    std::string beforeLast(char separator) { return take(rest().rfind(separator)); }
    std::string rest() const { return text_.substr(at_); }

    int integer(const std::string& piece) const {
        const auto v = parseInt(piece);
        if (!v) bad();
        return *v;
    }
    float number(const std::string& piece) const {
        char* end = nullptr;
        const float v = std::strtof(piece.c_str(), &end);
        if (piece.empty() || *end != '\0') bad();
        return v;
    }
    std::vector<int> integers(const std::string& piece) const {
        std::vector<int> out;
        for (std::size_t start = 0; start <= piece.size();) {
            const std::size_t comma = std::min(piece.find(',', start), piece.size());
            out.push_back(integer(piece.substr(start, comma - start)));
            start = comma + 1;
        }
        return out;
    }
    // FILE's JSON array of numbers.
    std::vector<float> vector(const std::string& path) const {
        nlohmann::json json;
        try {
            json = nlohmann::json::parse(readTextFile(path));
        } catch (const nlohmann::json::exception& e) {
            fail(flag_, " ", text_, ": ", path, " is not JSON (", e.what(),
                 "); it must hold an array of n_embd numbers");
        }
        if (!json.is_array() || json.empty() ||
            !std::all_of(json.begin(), json.end(), [](const auto& v) { return v.is_number(); }))
            fail(flag_, " ", text_, ": ", path, " must hold a JSON array of n_embd numbers");
        return json.get<std::vector<float>>();
    }

    [[noreturn]] void bad() const { fail(flag_, " \"", text_, "\" must look like ", form_); }

private:
    // rest()'s first `length` characters, and the separator after them.
    std::string take(std::size_t length) {
        if (length == std::string::npos) bad();
        std::string piece = rest().substr(0, length);
        at_ += length + 1;
        return piece;
    }

    std::string flag_, text_;
    const char* form_;
    std::size_t at_ = 0;
};

}  // namespace

std::vector<Intervention> interventionsFromFlags(const CliArgs& args) {
    std::vector<Intervention> list;
    for (const auto& [flag, text] : args.given()) {
        if (flag == "--ablate-head") {
            Value v(flag, text, "L.H (block L's head H: 3.7)");
            const int layer = v.integer(v.upTo('.'));
            list.push_back(AblateHead{layer, v.integer(v.rest())});
        } else if (flag == "--ablate-neurons") {
            Value v(flag, text, "L:I,J,... (block L's MLP units I, J, ...: 3:17,402)");
            const int layer = v.integer(v.upTo(':'));
            list.push_back(AblateNeurons{layer, v.integers(v.rest())});
        } else if (flag == "--steer") {
            Value v(flag, text, "L:FILE:SCALE (after block L: 6:love.json:4)");
            const int layer = v.integer(v.upTo(':'));
            const std::string file = v.beforeLast(':');
            list.push_back(Steer{layer, v.vector(file), v.number(v.rest())});
        } else if (flag == "--patch") {
            Value v(flag, text, "L:POS:FILE (after block L at position POS: 6:3:clean.json)");
            const int layer = v.integer(v.upTo(':'));
            const int position = v.integer(v.upTo(':'));
            list.push_back(Patch{layer, position, v.vector(v.rest())});
        }
    }
    return list;
}

}  // namespace gpt2
