#include "grammar/token_constraint.h"

#include <algorithm>
#include <map>

#include "util/error.h"

namespace gpt2 {

TokenTrie::TokenTrie(const std::vector<std::string>& tokens, int endOfText) : tokens_(tokens), endOfText_(endOfText) {
    // Built with maps, then laid out flat with each node's edges together, sorted by byte.
    std::vector<std::map<std::uint8_t, int>> children(1);
    std::vector<int> ends(1, -1);
    for (int id = 0; id < int(tokens.size()); ++id) {
        if (id == endOfText || tokens[std::size_t(id)].empty()) continue;
        int node = 0;
        for (const char c : tokens[std::size_t(id)]) {
            auto [it, added] = children[std::size_t(node)].try_emplace(std::uint8_t(c), int(children.size()));
            if (added) {
                children.emplace_back();
                ends.push_back(-1);
            }
            node = it->second;
        }
        ends[std::size_t(node)] = id;
    }
    nodes_.resize(children.size());
    for (std::size_t n = 0; n < children.size(); ++n) {
        nodes_[n] = {int(edges_.size()), int(children[n].size()), ends[n]};
        for (const auto& [byte, child] : children[n]) edges_.push_back({byte, child});
    }
}

// Masks past this many states are dropped (and made again where needed), so that a long generation
// over a pattern that never repeats a state keeps its memory bounded: 6 KB each for GPT-2.
constexpr std::size_t kMaxMasks = 4096;

CompiledPattern::CompiledPattern(const RegexNode& pattern, const std::string& label, const TokenTrie& trie)
    : automaton_(pattern, label), trie_(trie), label_(label) {
    const auto& mask = allowed(start());
    if (std::none_of(mask.begin(), mask.end(), [](std::uint32_t w) { return w != 0; }))
        fail(label, ": no token of the vocabulary can begin a match");
}

void CompiledPattern::walk(int node, int state, std::vector<std::uint32_t>& mask) {
    const TokenTrie::Node& n = trie_.nodes_[std::size_t(node)];
    for (int e = n.firstEdge; e < n.firstEdge + n.edges; ++e) {
        const auto [byte, child] = trie_.edges_[std::size_t(e)];
        const int next = automaton_.step(state, byte);
        if (next == ByteAutomaton::kDead) continue;
        const int token = trie_.nodes_[std::size_t(child)].token;
        if (token >= 0) mask[std::size_t(token) / 32] |= 1u << (token % 32);
        walk(child, next, mask);
    }
}

const std::vector<std::uint32_t>& CompiledPattern::allowed(int state) {
    auto found = masks_.find(state);
    if (found != masks_.end()) return found->second;
    if (masks_.size() >= kMaxMasks) masks_.clear();
    std::vector<std::uint32_t> mask(std::size_t(trie_.vocabSize() + 31) / 32, 0u);
    walk(0, state, mask);
    const int end = trie_.endOfText();
    if (end >= 0 && automaton_.accepting(state)) mask[std::size_t(end) / 32] |= 1u << (end % 32);
    return masks_.emplace(state, std::move(mask)).first->second;
}

int CompiledPattern::after(int state, int id) {
    const auto& mask = allowed(state);
    if (id < 0 || id >= trie_.vocabSize() || !((mask[std::size_t(id) / 32] >> (id % 32)) & 1u))
        fail("constraint: token ", id, " was drawn but is not allowed here");
    if (id == trie_.endOfText()) return state;
    for (const char c : trie_.bytes(id)) state = automaton_.step(state, std::uint8_t(c));
    return state;
}

}  // namespace gpt2
