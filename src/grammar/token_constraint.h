#pragma once
// Constrained generation over a vocabulary: which tokens a draw may take so that the text stays a
// prefix of some match of a pattern (grammar/byte_automaton.h), as a bitmask (bit i % 32 of word
// i / 32). A token is allowed where the automaton reads all its bytes from the current state without
// dying, which a walk of the vocabulary's byte trie finds while pruning every dead branch;
// <|endoftext|> is allowed where the text so far matches. A compiled pattern keeps its masks per
// automaton state, and generations with the same pattern share it, so a state met again costs nothing.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/byte_automaton.h"

namespace gpt2 {

// The tokens' bytes as a trie, made once per model.
class TokenTrie {
public:
    // `tokens`: each id's bytes; `endOfText` is left out of the trie (it ends the text instead).
    TokenTrie(const std::vector<std::string>& tokens, int endOfText);
    int vocabSize() const { return int(tokens_.size()); }
    int endOfText() const { return endOfText_; }
    const std::string& bytes(int id) const { return tokens_[std::size_t(id)]; }

private:
    friend class CompiledPattern;
    struct Node {
        int firstEdge = 0, edges = 0;  // into edges_, sorted by byte
        int token = -1;                // the id whose bytes end here
    };
    std::vector<Node> nodes_;
    std::vector<std::pair<std::uint8_t, int>> edges_;  // (byte, child)
    std::vector<std::string> tokens_;
    int endOfText_;
};

// A pattern's automaton over a vocabulary, and the masks of the states reached so far.
class CompiledPattern {
public:
    // `label` names the pattern in errors; fails where no token can begin a match.
    CompiledPattern(const RegexNode& pattern, const std::string& label, const TokenTrie& trie);
    const std::string& label() const { return label_; }
    int start() const { return automaton_.start(); }
    const std::vector<std::uint32_t>& allowed(int state);
    // The state after token `id` from `state`; fails for a token allowed() left out.
    int after(int state, int id);
    bool finished(int state) { return automaton_.accepting(state) && !automaton_.canContinue(state); }

private:
    void walk(int node, int state, std::vector<std::uint32_t>& mask);

    ByteAutomaton automaton_;
    const TokenTrie& trie_;
    std::string label_;
    std::unordered_map<int, std::vector<std::uint32_t>> masks_;
};

// One generation's place in a compiled pattern.
class TokenConstraint {
public:
    explicit TokenConstraint(std::shared_ptr<CompiledPattern> pattern)
        : pattern_(std::move(pattern)), state_(pattern_->start()) {}
    const std::string& label() const { return pattern_->label(); }
    // The tokens the next draw may take.
    const std::vector<std::uint32_t>& allowed() { return pattern_->allowed(state_); }
    // The drawn token: the automaton reads its bytes.
    void accept(int id) { state_ = pattern_->after(state_, id); }
    // The text matches and no byte can follow: the generation has nothing left to say.
    bool finished() { return pattern_->finished(state_); }

private:
    std::shared_ptr<CompiledPattern> pattern_;
    int state_;
};

}  // namespace gpt2
