#pragma once
// Regular expressions as trees of code-point sets, for constrained generation
// (grammar/byte_automaton.h runs them over bytes; grammar/json_schema.h makes them from JSON schemas).
//
// Syntax (ECMAScript's, without what needs more than a finite automaton): literals; `.` (any
// character but a line break); classes `[a-z]`, `[^"\\]`; escapes \d \D \w \W \s \S \n \r \t \f \v
// \0 \xHH \uHHHH \u{H...} and \ before any punctuation; groups `(...)`, `(?:...)`; alternation `|`;
// quantifiers `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`; `^` at the start and `$` at the end (a match is
// of the whole text anyway). Lookaround, backreferences, word boundaries and lazy quantifiers fail
// with an error that names them and their position.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpt2 {

using CodePointRanges = std::vector<std::pair<char32_t, char32_t>>;  // inclusive

struct RegexNode {
    enum Kind { Set, Concat, Alt, Repeat } kind = Concat;
    CodePointRanges set;  // Set: sorted, merged, no surrogates
    std::vector<RegexNode> children;
    int min = 0, max = 0;  // Repeat: max -1 is unbounded
};

// Throws Error naming the pattern, the position and what is wrong ("regex /a(b/: the group opened
// here is not closed at position 1").
RegexNode parseRegex(const std::string& pattern);

// Builders, for patterns made from other descriptions.
RegexNode setNode(CodePointRanges ranges);
RegexNode literalNode(std::string_view utf8);
RegexNode concatNode(std::vector<RegexNode> children);
RegexNode altNode(std::vector<RegexNode> children);
RegexNode repeatNode(RegexNode child, int min, int max);
CodePointRanges complement(const CodePointRanges& ranges);
// `node` with every set cut down to `allowed`: what it matches among texts of those characters only.
RegexNode restricted(RegexNode node, const CodePointRanges& allowed);

}  // namespace gpt2
