#include "grammar/regex_syntax.h"

#include <algorithm>
#include <cctype>

#include "tokenizer/utf8.h"
#include "util/error.h"

namespace gpt2 {
namespace {

constexpr char32_t kMaxCodePoint = 0x10FFFF;

// Sorted, merged, without the surrogates (which UTF-8 never encodes).
CodePointRanges normalized(CodePointRanges r) {
    CodePointRanges cut;
    for (auto [lo, hi] : r) {
        if (lo <= 0xD7FF || hi >= 0xE000) {
            if (lo < 0xD800 && hi > 0xDFFF) {
                cut.push_back({lo, 0xD7FF});
                cut.push_back({0xE000, hi});
            } else {
                cut.push_back({lo >= 0xD800 && lo <= 0xDFFF ? 0xE000 : lo, hi >= 0xD800 && hi <= 0xDFFF ? 0xD7FF : hi});
            }
        }
    }
    std::sort(cut.begin(), cut.end());
    CodePointRanges out;
    for (auto [lo, hi] : cut) {
        if (lo > hi) continue;
        if (!out.empty() && lo <= out.back().second + 1)
            out.back().second = std::max(out.back().second, hi);
        else
            out.push_back({lo, hi});
    }
    return out;
}

}  // namespace

CodePointRanges complement(const CodePointRanges& r) {
    CodePointRanges out;
    char32_t next = 0;
    for (auto [lo, hi] : normalized(r)) {
        if (lo > next) out.push_back({next, lo - 1});
        next = hi + 1;
    }
    if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
    return normalized(out);
}

namespace {

const CodePointRanges& digits() {
    static const CodePointRanges r = {{'0', '9'}};
    return r;
}
const CodePointRanges& wordCharacters() {
    static const CodePointRanges r = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
    return r;
}
// ECMAScript's \s: white space and line terminators.
const CodePointRanges& spaces() {
    static const CodePointRanges r = {{'\t', '\r'},     {' ', ' '},       {0xA0, 0xA0},     {0x1680, 0x1680},
                                      {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F},
                                      {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
    return r;
}

class Parser {
public:
    explicit Parser(const std::string& pattern) : p_(pattern) {}

    RegexNode parse() {
        if (peek('^')) ++i_;
        RegexNode n = alternation();
        if (i_ < p_.size()) error(i_, p_[i_] == ')' ? "this ) closes no group" : "unexpected character");
        return n;
    }

private:
    [[noreturn]] void error(std::size_t at, const std::string& what) const {
        fail("regex /", p_, "/: ", what, " at position ", at);
    }
    bool peek(char c) const { return i_ < p_.size() && p_[i_] == c; }

    RegexNode alternation() {
        RegexNode first = concatenation();
        if (!peek('|')) return first;
        RegexNode alt;
        alt.kind = RegexNode::Alt;
        alt.children.push_back(std::move(first));
        while (peek('|')) {
            ++i_;
            alt.children.push_back(concatenation());
        }
        return alt;
    }

    RegexNode concatenation() {
        RegexNode concat;
        concat.kind = RegexNode::Concat;
        while (i_ < p_.size() && !peek('|') && !peek(')')) {
            if (peek('$') && i_ + 1 == p_.size()) {
                ++i_;
                break;
            }
            concat.children.push_back(repetition());
        }
        return concat;
    }

    RegexNode repetition() {
        RegexNode n = atom();
        for (;;) {
            int min, max;
            if (peek('*')) {
                min = 0, max = -1, ++i_;
            } else if (peek('+')) {
                min = 1, max = -1, ++i_;
            } else if (peek('?')) {
                min = 0, max = 1, ++i_;
            } else if (peek('{') && bounds(min, max)) {
            } else {
                return n;
            }
            if (peek('?')) error(i_, "lazy quantifiers are not supported (a whole-text match has no use for them)");
            n = repeatNode(std::move(n), min, max);
        }
    }

    // {n}, {n,}, {n,m} at i_; false (i_ unmoved) where the brace starts no quantifier.
    bool bounds(int& min, int& max) {
        const std::size_t start = i_;
        auto number = [&](int& v) {
            const std::size_t from = i_;
            long value = 0;
            while (i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '9') {
                value = value * 10 + (p_[i_++] - '0');
                if (value > 100000) error(from, "a repetition count above 100000");
            }
            v = int(value);
            return i_ > from;
        };
        ++i_;
        if (!number(min)) {
            i_ = start;
            return false;
        }
        max = min;
        if (peek(',')) {
            ++i_;
            if (!number(max)) max = -1;
        }
        if (!peek('}')) {
            i_ = start;
            return false;
        }
        ++i_;
        if (max != -1 && max < min) error(start, "the repetition's upper bound is below its lower bound");
        return true;
    }

    RegexNode atom() {
        const std::size_t at = i_;
        const char c = p_[i_];
        if (c == '(') {
            ++i_;
            if (peek('?')) {
                if (i_ + 1 < p_.size() && p_[i_ + 1] == ':')
                    i_ += 2;
                else
                    error(at, "lookaround and named groups are not supported");
            }
            RegexNode inner = alternation();
            if (!peek(')')) error(at, "the group opened here is not closed");
            ++i_;
            return inner;
        }
        if (c == '[') return setNode(characterClass());
        if (c == '.') {
            ++i_;
            return setNode(complement({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}));
        }
        if (c == '\\') return setNode(escape(false));
        if (c == '*' || c == '+' || c == '?') error(at, "nothing to repeat");
        if (c == '^') error(at, "^ is supported only at the start");
        if (c == '$') error(at, "$ is supported only at the end");
        const char32_t cp = literal();
        return setNode({{cp, cp}});
    }

    char32_t literal() {
        const Utf8Char c = readUtf8(p_, i_);
        if (c.status != Utf8Char::Status::Complete) error(i_, "invalid UTF-8");
        i_ += c.length;
        return c.codePoint;
    }

    unsigned hexDigits(std::size_t count) {
        unsigned v = 0;
        for (std::size_t k = 0; k < count; ++k, ++i_) {
            if (i_ >= p_.size() || !std::isxdigit(static_cast<unsigned char>(p_[i_])))
                error(i_, "a hexadecimal digit is expected");
            const char h = p_[i_];
            v = v * 16 + unsigned(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
        }
        return v;
    }

    // The set of an escape at i_ (a backslash); `inClass`: \b is a backspace there.
    CodePointRanges escape(bool inClass) {
        const std::size_t at = i_++;
        if (i_ >= p_.size()) error(at, "the pattern ends in a backslash");
        const char c = p_[i_++];
        auto one = [](char32_t cp) { return CodePointRanges{{cp, cp}}; };
        switch (c) {
            case 'd': return digits();
            case 'D': return complement(digits());
            case 'w': return wordCharacters();
            case 'W': return complement(wordCharacters());
            case 's': return spaces();
            case 'S': return complement(spaces());
            case 'n': return one('\n');
            case 'r': return one('\r');
            case 't': return one('\t');
            case 'f': return one('\f');
            case 'v': return one('\v');
            case '0': return one(0);
            case 'x': return one(hexDigits(2));
            case 'u': {
                if (!peek('{')) return one(hexDigits(4));
                ++i_;
                char32_t v = 0;
                std::size_t n = 0;
                while (!peek('}')) {
                    v = v * 16 + hexDigits(1);
                    if (++n > 6 || v > kMaxCodePoint) error(at, "a code point beyond U+10FFFF");
                }
                ++i_;
                return one(v);
            }
            case 'b':
                if (inClass) return one('\b');
                error(at, "word boundaries are not supported");
            case 'B': error(at, "word boundaries are not supported");
            default:
                if (c >= '1' && c <= '9') error(at, "backreferences are not supported");
                if (std::isalnum(static_cast<unsigned char>(c))) error(at, std::string("unknown escape \\") + c);
                --i_;
                return one(literal());
        }
    }

    // One item of a class: a character, or an escape's set.
    CodePointRanges classItem() {
        if (peek('\\')) return escape(true);
        const char32_t c = literal();
        return {{c, c}};
    }
    static bool single(const CodePointRanges& r) { return r.size() == 1 && r[0].first == r[0].second; }

    CodePointRanges characterClass() {
        const std::size_t at = i_++;
        const bool negated = peek('^');
        if (negated) ++i_;
        CodePointRanges set;
        while (!peek(']')) {
            if (i_ >= p_.size()) error(at, "the class opened here is not closed");
            CodePointRanges item = classItem();
            // a-z: a range between two single characters (a - before ] is itself).
            if (single(item) && peek('-') && i_ + 1 < p_.size() && p_[i_ + 1] != ']') {
                ++i_;
                const std::size_t to = i_;
                const CodePointRanges end = classItem();
                if (!single(end)) error(to, "a class range must end in one character");
                if (end[0].first < item[0].first) error(to, "the class range's end is below its start");
                item[0].second = end[0].first;
            }
            set.insert(set.end(), item.begin(), item.end());
        }
        ++i_;
        return negated ? complement(set) : set;
    }

    const std::string& p_;
    std::size_t i_ = 0;
};

}  // namespace

RegexNode parseRegex(const std::string& pattern) { return Parser(pattern).parse(); }

RegexNode setNode(CodePointRanges ranges) {
    RegexNode n;
    n.kind = RegexNode::Set;
    n.set = normalized(std::move(ranges));
    return n;
}

RegexNode literalNode(std::string_view utf8) {
    RegexNode n;
    n.kind = RegexNode::Concat;
    for (std::size_t i = 0; i < utf8.size();) {
        const Utf8Char c = readUtf8(utf8, i);
        if (c.status != Utf8Char::Status::Complete) fail("regex literal: invalid UTF-8 at byte ", i);
        n.children.push_back(setNode({{c.codePoint, c.codePoint}}));
        i += c.length;
    }
    return n;
}

RegexNode concatNode(std::vector<RegexNode> children) {
    RegexNode n;
    n.kind = RegexNode::Concat;
    n.children = std::move(children);
    return n;
}

RegexNode altNode(std::vector<RegexNode> children) {
    RegexNode n;
    n.kind = RegexNode::Alt;
    n.children = std::move(children);
    return n;
}

RegexNode repeatNode(RegexNode child, int min, int max) {
    RegexNode n;
    n.kind = RegexNode::Repeat;
    n.min = min;
    n.max = max;
    n.children.push_back(std::move(child));
    return n;
}

RegexNode restricted(RegexNode node, const CodePointRanges& allowed) {
    if (node.kind == RegexNode::Set) {
        CodePointRanges kept;
        for (auto [lo, hi] : node.set)
            for (auto [alo, ahi] : allowed)
                if (std::max(lo, alo) <= std::min(hi, ahi)) kept.push_back({std::max(lo, alo), std::min(hi, ahi)});
        return setNode(std::move(kept));
    }
    for (RegexNode& child : node.children) child = restricted(std::move(child), allowed);
    return node;
}

}  // namespace gpt2
