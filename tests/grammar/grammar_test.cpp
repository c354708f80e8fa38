// Constrained generation's automata (src/grammar): patterns against std::regex's ECMAScript matcher
// on random texts, UTF-8 classes, the errors a user sees, JSON schemas by random walks whose every
// text must parse and fit the schema (checked by a validator written here), and the token masks of
// a small vocabulary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <string>

#include "grammar/byte_automaton.h"
#include "grammar/json_schema.h"
#include "grammar/token_constraint.h"
#include "util/error.h"

namespace gpt2 {
namespace {

bool matches(const std::string& pattern, const std::string& text) {
    ByteAutomaton a(parseRegex(pattern), "test");
    int state = a.start();
    for (const char c : text) {
        state = a.step(state, std::uint8_t(c));
        if (state == ByteAutomaton::kDead) return false;
    }
    return a.accepting(state);
}

std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

TEST(ByteAutomaton, MatchesAsEcmaScriptDoesOnRandomTexts) {
    const std::vector<std::string> patterns = {"a*b",
                                               "(ab|cd)+",
                                               "[0-9]{3}-[a-z]{2,4}",
                                               "\\d+(\\.\\d+)?",
                                               "[^ab]*",
                                               "x?y{2,}",
                                               "(?:a|b)*c$",
                                               "^\\w+\\s\\w+$",
                                               ".{2}",
                                               "[ -/]+",
                                               "a{0}b",
                                               "[a\\-z]+",
                                               "(a|)+b",
                                               "[\\d.]{1,3}",
                                               "\\.\\*\\(",
                                               "(a{2}|b{3})*",
                                               "[\\x41-\\x43]x"};
    const std::string alphabet = "abcdxyz019.-_ */(\"\\A\tB";
    std::mt19937 random(7);
    int matched = 0;
    for (const std::string& pattern : patterns) {
        const std::regex reference(pattern, std::regex::ECMAScript);
        for (int n = 0; n < 400; ++n) {
            std::string text;
            const int length = int(random() % 9);
            for (int k = 0; k < length; ++k) text += alphabet[random() % alphabet.size()];
            // Half the texts are built from the pattern's own characters, so that matches are common.
            if (n % 2)
                for (char& c : text) c = pattern[random() % pattern.size()];
            const bool expected = std::regex_match(text, reference);
            matched += expected;
            EXPECT_EQ(matches(pattern, text), expected) << "/" << pattern << "/ on \"" << text << "\"";
        }
    }
    EXPECT_GT(matched, 300) << "the texts should match often enough to test matching";
}

TEST(ByteAutomaton, ClassesAndDotReadUtf8) {
    EXPECT_TRUE(matches("[α-ω]+", "λόγος") == false);  // ό is outside α-ω
    EXPECT_TRUE(matches("[α-ω]+", "λογοσ"));
    EXPECT_TRUE(matches(".", "😀"));
    EXPECT_FALSE(matches(".", "\n"));
    EXPECT_TRUE(matches("[^a]", "é"));
    EXPECT_FALSE(matches("[^a]", "a"));
    EXPECT_FALSE(matches("[^a]", "\xC3"));  // half a character
    EXPECT_TRUE(matches("\\u00e9\\u{1F600}", "é😀"));
    EXPECT_TRUE(matches("\\S+", "日本語"));
    EXPECT_FALSE(matches("\\S+", "日 本"));
}

TEST(ByteAutomaton, BadPatternsFailNamingWhatAndWhere) {
    auto error = [](const std::string& p) {
        return errorOf([&] { ByteAutomaton(parseRegex(p), "regex /" + p + "/"); });
    };
    EXPECT_EQ(error("a(b"), "regex /a(b/: the group opened here is not closed at position 1");
    EXPECT_EQ(error("(?=a)"), "regex /(?=a)/: lookaround and named groups are not supported at position 0");
    EXPECT_EQ(error("(a)\\1"), "regex /(a)\\1/: backreferences are not supported at position 3");
    EXPECT_EQ(error("a*?"),
              "regex /a*?/: lazy quantifiers are not supported (a whole-text match has no use for them) at position 2");
    EXPECT_EQ(error("[z-a]"), "regex /[z-a]/: the class range's end is below its start at position 3");
    EXPECT_EQ(error("a{3,1}"), "regex /a{3,1}/: the repetition's upper bound is below its lower bound at position 1");
    EXPECT_EQ(error("*a"), "regex /*a/: nothing to repeat at position 0");
    EXPECT_EQ(error("a)"), "regex /a)/: this ) closes no group at position 1");
    EXPECT_EQ(error("[^\\s\\S]"), "regex /[^\\s\\S]/: matches no text");
}

// A validator of its own for the schemas below: type, properties, required, additionalProperties,
// enum, maxLength, minLength, items, minItems, maxItems.
bool fits(const nlohmann::json& v, const nlohmann::json& s) {
    if (s.contains("enum")) return std::find(s["enum"].begin(), s["enum"].end(), v) != s["enum"].end();
    if (s.contains("const")) return v == s["const"];
    if (s.contains("anyOf"))
        return std::any_of(s["anyOf"].begin(), s["anyOf"].end(), [&](const auto& sub) { return fits(v, sub); });
    if (s["type"].is_array())
        return std::any_of(s["type"].begin(), s["type"].end(), [&](const auto& t) {
            nlohmann::json one = s;
            one["type"] = t;
            return fits(v, one);
        });
    const std::string type = s["type"];
    if (type == "string") {
        if (!v.is_string()) return false;
        const std::size_t length = [&] {  // code points
            std::size_t n = 0;
            for (unsigned char c : v.get<std::string>()) n += (c & 0xC0) != 0x80;
            return n;
        }();
        return length <= s.value("maxLength", std::size_t(1) << 30) && length >= s.value("minLength", std::size_t(0));
    }
    if (type == "integer") return v.is_number_integer();
    if (type == "number") return v.is_number();
    if (type == "boolean") return v.is_boolean();
    if (type == "null") return v.is_null();
    if (type == "array") {
        if (!v.is_array() || v.size() < s.value("minItems", 0u) || v.size() > s.value("maxItems", 1u << 30))
            return false;
        return std::all_of(v.begin(), v.end(), [&](const auto& item) { return fits(item, s["items"]); });
    }
    if (!v.is_object()) return false;
    for (const auto& r : s.value("required", nlohmann::json::array()))
        if (!v.contains(r.get<std::string>())) return false;
    for (const auto& [key, value] : v.items()) {
        if (!s["properties"].contains(key)) return false;
        if (!fits(value, s["properties"][key])) return false;
    }
    return true;
}

// A random text of the automaton's language: random live bytes, stopping at a match with
// probability 1/4 (always where nothing can follow).
std::string randomText(ByteAutomaton& a, std::mt19937& random) {
    std::string text;
    int state = a.start();
    for (;;) {
        if (a.accepting(state) && (random() % 4 == 0 || !a.canContinue(state))) return text;
        std::vector<int> bytes;
        for (int b = 0; b < 256; ++b)
            if (a.step(state, std::uint8_t(b)) != ByteAutomaton::kDead) bytes.push_back(b);
        const int b = bytes[random() % bytes.size()];
        text += char(b);
        state = a.step(state, std::uint8_t(b));
    }
}

TEST(JsonSchema, EveryTextOfTheSchemaParsesAndFits) {
    const std::vector<std::string> schemas = {
        R"({"type":"object","properties":{"name":{"type":"string","maxLength":5},"age":{"type":"integer"},
            "ok":{"type":"boolean"},"color":{"enum":["red","green",3,null]}},"required":["name","age"],
            "additionalProperties":false})",
        R"({"type":"array","items":{"type":"number"},"minItems":1,"maxItems":3})",
        R"({"type":"object","properties":{"a":{"type":["string","null"],"minLength":2,"maxLength":3},
            "b":{"type":"array","items":{"type":"object","properties":{"x":{"const":"y"}}},"maxItems":2}}})",
        R"({"anyOf":[{"type":"integer"},{"type":"string","pattern":"^[A-Z]{2}[0-9]$"}]})",
        R"({"type":"object","properties":{"p":{"type":"string","pattern":"ab+"}},"required":["p"]})",
    };
    std::mt19937 random(11);
    for (const std::string& text : schemas) {
        const auto schema = nlohmann::json::parse(text);
        ByteAutomaton a(jsonSchemaPattern(text), "jsonSchema");
        for (int n = 0; n < 300; ++n) {
            const std::string out = randomText(a, random);
            nlohmann::json value;
            ASSERT_NO_THROW(value = nlohmann::json::parse(out)) << out;
            EXPECT_TRUE(fits(value, schema)) << out << " for " << text;
            if (schema.contains("properties") && schema["properties"].contains("p"))
                EXPECT_NE(value["p"].get<std::string>().find("ab"), std::string::npos) << out;
        }
    }
    // And texts that do not fit are not matched.
    const std::string person = schemas[0];
    ByteAutomaton a(jsonSchemaPattern(person), "jsonSchema");
    auto accepts = [&](const std::string& t) {
        int s = a.start();
        for (char c : t)
            if ((s = a.step(s, std::uint8_t(c))) == ByteAutomaton::kDead) return false;
        return a.accepting(s);
    };
    EXPECT_TRUE(accepts(R"({"name":"ab","age":-3, "color":"red"})"));
    EXPECT_FALSE(accepts(R"({"age":3})"));
    EXPECT_FALSE(accepts(R"({"name":"abcdef","age":3})"));
    EXPECT_FALSE(accepts(R"({"name":"ab","age":3,"x":1})"));
    EXPECT_FALSE(accepts(R"({"name":"ab","age":3.5})"));
}

TEST(JsonSchema, UnsupportedOrImpossibleSchemasFailNamingWhere) {
    auto error = [](const std::string& s) { return errorOf([&] { jsonSchemaPattern(s); }); };
    EXPECT_EQ(error(R"({"type":"integer","minimum":3})"), "jsonSchema at #: the keyword minimum is not supported");
    EXPECT_EQ(error(R"({"type":"object","properties":{"a":{"type":"strin"}}})"),
              "jsonSchema at #.properties.a: unknown type \"strin\"");
    EXPECT_EQ(error(R"({"type":"object","properties":{},"required":["b"]})"),
              "jsonSchema at #: the required property \"b\" is not in properties");
    EXPECT_EQ(error(R"({"type":"array"})"), "jsonSchema at #: an array needs items");
    EXPECT_EQ(error(R"({"type":"string","maxLength":1,"minLength":2})"),
              "jsonSchema at #: maxLength is below minLength");
    EXPECT_EQ(error("{").rfind("jsonSchema: not JSON (", 0), 0u);
    EXPECT_EQ(error("false"), "jsonSchema at #: false matches no value");
}

TEST(TokenConstraint, AllowsTheTokensThatKeepAMatchPossible) {
    // Tokens 0..5: "a", "b", "ab", "ba", "c", and 5 ends the text.
    const TokenTrie trie({"a", "b", "ab", "ba", "c", "<|endoftext|>"}, 5);
    auto ids = [](const std::vector<std::uint32_t>& mask) {
        std::vector<int> out;
        for (int id = 0; id < 6; ++id)
            if ((mask[0] >> id) & 1u) out.push_back(id);
        return out;
    };
    TokenConstraint pairs(std::make_shared<CompiledPattern>(parseRegex("(ab)+"), "regex", trie));
    EXPECT_EQ(ids(pairs.allowed()), (std::vector<int>{0, 2}));
    pairs.accept(0);
    EXPECT_EQ(ids(pairs.allowed()), (std::vector<int>{1, 3}));  // "ab", or "aba" of "abab"
    pairs.accept(1);
    EXPECT_EQ(ids(pairs.allowed()), (std::vector<int>{0, 2, 5}));
    EXPECT_FALSE(pairs.finished());
    EXPECT_EQ(errorOf([&] { pairs.accept(4); }), "constraint: token 4 was drawn but is not allowed here");
    TokenConstraint once(std::make_shared<CompiledPattern>(parseRegex("ab"), "regex", trie));
    once.accept(2);
    EXPECT_TRUE(once.finished());
    EXPECT_EQ(ids(once.allowed()), (std::vector<int>{5}));
    EXPECT_EQ(errorOf([&] { CompiledPattern(parseRegex("d"), "regex /d/", trie); }),
              "regex /d/: no token of the vocabulary can begin a match");
}

}  // namespace
}  // namespace gpt2
