#pragma once
// A pattern (grammar/regex_syntax.h) as an automaton over UTF-8 bytes, for constrained generation:
// the text must match the whole pattern. Each code-point set becomes the UTF-8 byte ranges that
// encode it, Thompson's construction makes an NFA of those, and the DFA's states are made from it as
// they are first reached (subset construction), each with its 256 successors.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "grammar/regex_syntax.h"

namespace gpt2 {

class ByteAutomaton {
public:
    // `label` names the pattern in errors ("regex /(?!a)/", "jsonSchema").
    ByteAutomaton(const RegexNode& root, const std::string& label);

    static constexpr int kDead = -1;
    int start() const { return 0; }
    // The state after `byte` from `state` (kDead: no match can go on from there).
    int step(int state, std::uint8_t byte);
    // Whether the text read so far matches.
    bool accepting(int state) const { return states_[std::size_t(state)].accepting; }
    // Whether some byte leads on from `state`.
    bool canContinue(int state);

private:
    struct NfaState {
        std::vector<std::array<int, 3>> edges;  // (low byte, high byte, target)
        std::vector<int> empty;                 // epsilon moves
    };
    struct DfaState {
        std::vector<int> nfa;  // sorted, closed under epsilon moves
        std::array<int, 256> next;
        bool accepting = false;
    };
    friend class RegexBuilder;

    int intern(std::vector<int> set);
    std::vector<NfaState> nfa_;
    int accept_ = 0;
    std::vector<DfaState> states_;
    std::map<std::vector<int>, int> ids_;
};

}  // namespace gpt2
