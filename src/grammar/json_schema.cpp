#include "grammar/json_schema.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.h"

namespace gpt2 {
namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string> kAnnotations = {"title",   "description", "default", "examples",
                                            "$schema", "$id",         "$comment"};

// Characters a JSON string holds as they are (not ", \ or a control character).
const CodePointRanges& plainCharacters() {
    static const CodePointRanges r = complement({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}});
    return r;
}

RegexNode optional(RegexNode n) { return repeatNode(std::move(n), 0, 1); }
RegexNode space() { return optional(literalNode(" ")); }
RegexNode digits(int min, int max) { return repeatNode(setNode({{'0', '9'}}), min, max); }

// The four hex digits of a \u escape, but never a surrogate's (D800-DFFF): a lone one is not valid
// JSON text to strict parsers, and characters beyond U+FFFF are written as themselves instead.
RegexNode unicodeEscape() {
    const CodePointRanges hex = {{'0', '9'}, {'A', 'F'}, {'a', 'f'}};
    return altNode(
        {concatNode(
             {setNode({{'0', '9'}, {'A', 'C'}, {'E', 'F'}, {'a', 'c'}, {'e', 'f'}}), repeatNode(setNode(hex), 3, 3)}),
         concatNode({setNode({{'D', 'D'}, {'d', 'd'}}), setNode({{'0', '7'}}), repeatNode(setNode(hex), 2, 2)})});
}

class Converter {
public:
    RegexNode convert(const Json& schema, const std::string& at) {
        if (schema.is_boolean())
            fail("jsonSchema at ", at, ": ",
                 schema.get<bool>() ? "true (any value) is not supported; give a type" : "false matches no value");
        if (!schema.is_object()) fail("jsonSchema at ", at, ": a schema must be an object, got ", schema.dump());
        std::set<std::string> used(kAnnotations);
        auto take = [&](const char* keyword) -> const Json* {
            used.insert(keyword);
            const auto it = schema.find(keyword);
            return it == schema.end() ? nullptr : &*it;
        };
        RegexNode node;
        if (const Json* values = take("enum")) {
            if (!values->is_array() || values->empty()) fail("jsonSchema at ", at, ": enum must be a non-empty array");
            std::vector<RegexNode> options;
            for (const Json& v : *values) options.push_back(literalNode(v.dump()));
            node = altNode(std::move(options));
        } else if (const Json* value = take("const")) {
            node = literalNode(value->dump());
        } else if (const Json* any = take("anyOf")) {
            if (!any->is_array() || any->empty()) fail("jsonSchema at ", at, ": anyOf must be a non-empty array");
            std::vector<RegexNode> options;
            for (std::size_t i = 0; i < any->size(); ++i)
                options.push_back(convert((*any)[i], at + ".anyOf[" + std::to_string(i) + "]"));
            node = altNode(std::move(options));
        } else {
            const Json* type = take("type");
            if (!type) fail("jsonSchema at ", at, ": give a type (or enum, const or anyOf)");
            std::vector<std::string> types;
            if (type->is_string())
                types.push_back(type->get<std::string>());
            else if (type->is_array() && !type->empty() &&
                     std::all_of(type->begin(), type->end(), [](const Json& t) { return t.is_string(); }))
                for (const Json& t : *type) types.push_back(t.get<std::string>());
            else
                fail("jsonSchema at ", at, ": type must be a string or an array of strings");
            std::vector<RegexNode> options;
            for (const std::string& t : types) options.push_back(ofType(t, at, take));
            node = options.size() == 1 ? std::move(options.front()) : altNode(std::move(options));
        }
        for (const auto& [keyword, value] : schema.items())
            if (!used.count(keyword)) fail("jsonSchema at ", at, ": the keyword ", keyword, " is not supported");
        return node;
    }

private:
    template <typename Take>
    RegexNode ofType(const std::string& type, const std::string& at, Take& take) {
        if (type == "string") return string(at, take);
        if (type == "integer") return integer();
        if (type == "number") {
            RegexNode fraction = concatNode({literalNode("."), digits(1, 15)});
            RegexNode exponent = concatNode(
                {setNode({{'E', 'E'}, {'e', 'e'}}), optional(setNode({{'+', '+'}, {'-', '-'}})), digits(1, 2)});
            return concatNode({integer(), optional(std::move(fraction)), optional(std::move(exponent))});
        }
        if (type == "boolean") return altNode({literalNode("true"), literalNode("false")});
        if (type == "null") return literalNode("null");
        if (type == "array") return array(at, take);
        if (type == "object") return object(at, take);
        fail("jsonSchema at ", at, ": unknown type \"", type, "\"");
    }

    static RegexNode integer() {
        return concatNode({optional(literalNode("-")),
                           altNode({literalNode("0"), concatNode({setNode({{'1', '9'}}), digits(0, 15)})})});
    }

    static int count(const Json* value, const char* keyword, const std::string& at, int fallback) {
        if (!value) return fallback;
        if (!value->is_number_integer() || value->get<long long>() < 0 || value->get<long long>() > 100000)
            fail("jsonSchema at ", at, ": ", keyword, " must be an integer in [0, 100000]");
        return int(value->get<long long>());
    }

    template <typename Take>
    RegexNode string(const std::string& at, Take& take) {
        const Json* pattern = take("pattern");
        const int min = count(take("minLength"), "minLength", at, 0);
        const int max = count(take("maxLength"), "maxLength", at, -1);
        if (max != -1 && max < min) fail("jsonSchema at ", at, ": maxLength is below minLength");
        const RegexNode quote = literalNode("\"");
        if (pattern) {
            if (!pattern->is_string()) fail("jsonSchema at ", at, ": pattern must be a string");
            if (min != 0 || max != -1)
                fail("jsonSchema at ", at, ": pattern with minLength or maxLength is not supported");
            std::string text = pattern->get<std::string>();
            // Unanchored, as JSON Schema's patterns are: any text may come before and after it.
            const bool anchoredStart = !text.empty() && text.front() == '^';
            const bool anchoredEnd =
                !text.empty() && text.back() == '$' && (text.size() < 2 || text[text.size() - 2] != '\\');
            if (anchoredStart) text.erase(0, 1);
            if (anchoredEnd) text.pop_back();
            RegexNode body = restricted(parseRegex(text), plainCharacters());
            RegexNode anything = repeatNode(setNode(plainCharacters()), 0, -1);
            std::vector<RegexNode> parts = {quote};
            if (!anchoredStart) parts.push_back(anything);
            parts.push_back(std::move(body));
            if (!anchoredEnd) parts.push_back(anything);
            parts.push_back(quote);
            return concatNode(std::move(parts));
        }
        RegexNode escape = concatNode({literalNode("\\"), altNode({setNode({{'"', '"'},
                                                                            {'/', '/'},
                                                                            {'\\', '\\'},
                                                                            {'b', 'b'},
                                                                            {'f', 'f'},
                                                                            {'n', 'n'},
                                                                            {'r', 'r'},
                                                                            {'t', 't'}}),
                                                                   concatNode({literalNode("u"), unicodeEscape()})})});
        RegexNode character = altNode({setNode(plainCharacters()), std::move(escape)});
        return concatNode({quote, repeatNode(std::move(character), min, max), quote});
    }

    template <typename Take>
    RegexNode array(const std::string& at, Take& take) {
        const Json* items = take("items");
        if (!items) fail("jsonSchema at ", at, ": an array needs items");
        const int min = count(take("minItems"), "minItems", at, 0);
        const int max = count(take("maxItems"), "maxItems", at, -1);
        if (max != -1 && max < min) fail("jsonSchema at ", at, ": maxItems is below minItems");
        if (max == 0) return literalNode("[]");
        const RegexNode item = convert(*items, at + ".items");
        RegexNode rest =
            repeatNode(concatNode({literalNode(","), space(), item}), std::max(min - 1, 0), max == -1 ? -1 : max - 1);
        RegexNode list = concatNode({item, std::move(rest)});
        return concatNode({literalNode("["), min == 0 ? optional(std::move(list)) : std::move(list), literalNode("]")});
    }

    template <typename Take>
    RegexNode object(const std::string& at, Take& take) {
        const Json* properties = take("properties");
        const Json* required = take("required");
        const Json* additional = take("additionalProperties");
        if (additional && !additional->is_boolean())
            fail("jsonSchema at ", at, ": additionalProperties must be true or false (no other property is written)");
        std::vector<std::string> names;
        std::vector<RegexNode> members;
        if (properties) {
            if (!properties->is_object()) fail("jsonSchema at ", at, ": properties must be an object");
            for (const auto& [name, sub] : properties->items()) {
                names.push_back(name);
                members.push_back(concatNode({literalNode(Json(name).dump()), literalNode(":"), space(),
                                              convert(sub, at + ".properties." + name)}));
            }
        }
        std::vector<bool> needed(names.size(), false);
        if (required) {
            if (!required->is_array()) fail("jsonSchema at ", at, ": required must be an array of names");
            for (const Json& r : *required) {
                const auto it =
                    r.is_string() ? std::find(names.begin(), names.end(), r.get<std::string>()) : names.end();
                if (it == names.end())
                    fail("jsonSchema at ", at, ": the required property ", r.dump(), " is not in properties");
                needed[std::size_t(it - names.begin())] = true;
            }
        }
        // After a first member, each later one is ", member", required or optional, in order; before
        // it, the first member written is any optional one or the first required one.
        auto after = [&](std::size_t from) {
            std::vector<RegexNode> parts;
            for (std::size_t j = from; j < names.size(); ++j) {
                RegexNode m = concatNode({literalNode(","), space(), members[j]});
                parts.push_back(needed[j] ? std::move(m) : optional(std::move(m)));
            }
            return concatNode(std::move(parts));
        };
        std::vector<RegexNode> firsts;
        bool canBeEmpty = true;
        for (std::size_t i = 0; i < names.size(); ++i) {
            firsts.push_back(concatNode({members[i], after(i + 1)}));
            if (needed[i]) {
                canBeEmpty = false;
                break;
            }
        }
        if (canBeEmpty) firsts.push_back(concatNode({}));
        return concatNode({literalNode("{"), altNode(std::move(firsts)), literalNode("}")});
    }
};

}  // namespace

RegexNode jsonSchemaPattern(const std::string& schema) {
    Json parsed;
    try {
        parsed = Json::parse(schema);
    } catch (const Json::exception& e) {
        fail("jsonSchema: not JSON (", e.what(), ")");
    }
    return Converter().convert(parsed, "#");
}

}  // namespace gpt2
