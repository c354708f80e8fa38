#include "platform/web/js_options.h"

#include <emscripten/bind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "option_defaults.h"
#include "util/error.h"

namespace gpt2 {
namespace {

using defaults::FlagSpec;
using emscripten::val;

// Sets each visited field from the object's key of the option's name, by the field's type: a boolean
// or integer that may be unset is -1 for null, an optional is empty for null.
class Reader {
public:
    explicit Reader(const val& options) : options_(options) {}

    void operator()(const FlagSpec& spec, TexelFormat& field) {
        field = texelFormatOption(spec.name, get(spec).as<std::string>());
    }
    void operator()(const FlagSpec& spec, Backend& field) { field = backendOption(get(spec).as<std::string>()); }
    void operator()(const FlagSpec& spec, bool& field) { field = get(spec).as<bool>(); }
    void operator()(const FlagSpec& spec, int& field) {
        const val v = get(spec);
        field = v.isNull() ? -1 : v.isTrue() ? 1 : v.isFalse() ? 0 : v.as<int>();
    }
    void operator()(const FlagSpec& spec, float& field) { field = get(spec).as<float>(); }
    void operator()(const FlagSpec& spec, double& field) { field = get(spec).as<double>(); }
    void operator()(const FlagSpec& spec, std::optional<int>& field) {
        const val v = get(spec);
        field = v.isNull() ? std::nullopt : std::optional<int>(v.as<int>());
    }
    void operator()(const FlagSpec& spec, std::optional<std::uint64_t>& field) {
        const val v = get(spec);
        field = v.isNull() ? std::nullopt : std::optional<std::uint64_t>(std::uint64_t(v.as<double>()));
    }
    void operator()(const FlagSpec& spec, std::vector<std::string>& field) {
        field = emscripten::vecFromJSArray<std::string>(get(spec));
    }
    // A string, or (jsonSchema) an object, as its JSON text.
    void operator()(const FlagSpec& spec, std::optional<std::string>& field) {
        const val v = get(spec);
        if (v.isNull()) return field.reset();
        field = v.isString() ? v.as<std::string>() : val::global("JSON").call<std::string>("stringify", v);
    }
    // logitBias: { id: bias }.
    void operator()(const FlagSpec& spec, std::vector<std::pair<int, float>>& field) {
        const val v = get(spec);
        field.clear();
        if (v.isNull()) return;
        const val entries = val::global("Object").call<val>("entries", v);
        for (int i = 0; i < entries["length"].as<int>(); ++i)
            field.push_back({std::stoi(entries[i][0].as<std::string>()), entries[i][1].as<float>()});
    }

private:
    val get(const FlagSpec& spec) const {
        const val v = options_[spec.name];
        if (v.isUndefined())
            fail("options: ", spec.name,
                 " did not reach the engine (the web module sends every option of "
                 "src/options.json; rebuild it with the wasm module)");
        return v;
    }
    const val& options_;
};

// Writes each visited field under its option's name: the Reader's conversions, inverted.
class Writer {
public:
    explicit Writer(val& out) : out_(out) {}

    void operator()(const FlagSpec& spec, const TexelFormat& field) {
        out_.set(spec.name, texelFormatOptionName(field));
    }
    void operator()(const FlagSpec& spec, const Backend& field) { out_.set(spec.name, backendOptionName(field)); }
    template <typename T>
    void operator()(const FlagSpec& spec, const std::optional<T>& field) {
        out_.set(spec.name, field ? val(double(*field)) : val::null());
    }
    void operator()(const FlagSpec& spec, const std::optional<std::string>& field) {
        out_.set(spec.name, field ? val(*field) : val::null());
    }
    void operator()(const FlagSpec& spec, const std::vector<std::pair<int, float>>& field) {
        if (field.empty()) return out_.set(spec.name, val::null());
        val bias = val::object();
        for (const auto& [id, b] : field) bias.set(std::to_string(id), b);
        out_.set(spec.name, bias);
    }
    void operator()(const FlagSpec& spec, const std::vector<std::string>& field) {
        val list = val::array();
        for (const auto& s : field) list.call<void>("push", s);
        out_.set(spec.name, list);
    }
    void operator()(const FlagSpec& spec, const int& field) {
        if (spec.unset && field == -1)
            out_.set(spec.name, val::null());
        else if (std::string(spec.type) == "boolean")
            out_.set(spec.name, field != 0);
        else
            out_.set(spec.name, field);
    }
    template <typename T>
    void operator()(const FlagSpec& spec, const T& field) {
        out_.set(spec.name, field);
    }

private:
    val& out_;
};

}  // namespace

ModelOptions modelOptionsFromJs(const val& options) {
    ModelOptions o;
    defaults::forEachWebModelOption(o, Reader(options));
    o.phone = options["phone"].as<bool>();
    return o;
}

GenerateOptions generateOptionsFromJs(const val& options) {
    GenerateOptions o;
    defaults::forEachWebGenerateOption(o, Reader(options));
    return o;
}

val modelOptionsToJs(const ModelOptions& options) {
    val out = val::object();
    defaults::forEachWebModelOption(options, Writer(out));
    return out;
}

val generateOptionsToJs(const GenerateOptions& options) {
    val out = val::object();
    defaults::forEachWebGenerateOption(options, Writer(out));
    return out;
}

}  // namespace gpt2
