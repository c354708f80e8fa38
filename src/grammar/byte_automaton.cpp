#include "grammar/byte_automaton.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "tokenizer/utf8.h"
#include "util/error.h"

namespace gpt2 {
namespace {

// An NFA this large would make DFA states slow to build: the pattern is refused instead.
constexpr std::size_t kMaxNfaStates = 1 << 20;

using ByteSequence = std::vector<std::pair<std::uint8_t, std::uint8_t>>;

// The byte-range sequences whose strings are exactly the UTF-8 encodings of [lo, hi]: the range is
// split where the encoding's length changes, then until its ends differ only in bytes that can each
// run over a whole range (RE2's utf8 ranges).
void utf8Sequences(char32_t lo, char32_t hi, std::vector<ByteSequence>& out) {
    if (lo > hi) return;
    for (char32_t max : {char32_t(0x7F), char32_t(0x7FF), char32_t(0xFFFF)})
        if (lo <= max && max < hi) {
            utf8Sequences(lo, max, out);
            utf8Sequences(max + 1, hi, out);
            return;
        }
    if (hi < 0x80) {
        out.push_back({{std::uint8_t(lo), std::uint8_t(hi)}});
        return;
    }
    for (int i = 1; i < 4; ++i) {
        const char32_t m = (char32_t(1) << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            if ((lo & m) != 0) {
                utf8Sequences(lo, lo | m, out);
                utf8Sequences((lo | m) + 1, hi, out);
                return;
            }
            if ((hi & m) != m) {
                utf8Sequences(lo, (hi & ~m) - 1, out);
                utf8Sequences(hi & ~m, hi, out);
                return;
            }
        }
    }
    std::string a, b;
    appendUtf8(a, lo);
    appendUtf8(b, hi);
    ByteSequence sequence;
    for (std::size_t i = 0; i < a.size(); ++i) sequence.push_back({std::uint8_t(a[i]), std::uint8_t(b[i])});
    out.push_back(sequence);
}

}  // namespace

// Thompson's construction over byte ranges.
class RegexBuilder {
public:
    RegexBuilder(ByteAutomaton& a, const std::string& label) : a_(a), label_(label) {}

    // The fragment (start, end) of `n`.
    std::pair<int, int> build(const RegexNode& n) {
        switch (n.kind) {
            case RegexNode::Set: {
                const int s = state(), e = state();
                std::vector<ByteSequence> sequences;
                for (auto [lo, hi] : n.set) utf8Sequences(lo, hi, sequences);
                for (const ByteSequence& seq : sequences) {
                    int from = s;
                    for (std::size_t k = 0; k < seq.size(); ++k) {
                        const int to = k + 1 == seq.size() ? e : state();
                        a_.nfa_[std::size_t(from)].edges.push_back({seq[k].first, seq[k].second, to});
                        from = to;
                    }
                }
                return {s, e};
            }
            case RegexNode::Concat: {
                const int s = state();
                int end = s;
                for (const RegexNode& child : n.children) {
                    const auto [cs, ce] = build(child);
                    link(end, cs);
                    end = ce;
                }
                return {s, end};
            }
            case RegexNode::Alt: {
                const int s = state(), e = state();
                for (const RegexNode& child : n.children) {
                    const auto [cs, ce] = build(child);
                    link(s, cs);
                    link(ce, e);
                }
                return {s, e};
            }
            case RegexNode::Repeat: {
                const int s = state();
                int end = s;
                for (int k = 0; k < n.min; ++k) {
                    const auto [cs, ce] = build(n.children[0]);
                    link(end, cs);
                    end = ce;
                }
                const int e = state();
                if (n.max == -1) {
                    const auto [cs, ce] = build(n.children[0]);
                    link(end, cs);
                    link(ce, end);
                    link(end, e);
                    return {s, e};
                }
                // Each optional copy may be skipped to the end: linear in the count.
                for (int k = n.min; k < n.max; ++k) {
                    const auto [cs, ce] = build(n.children[0]);
                    link(end, cs);
                    link(end, e);
                    end = ce;
                }
                link(end, e);
                return {s, e};
            }
        }
        return {0, 0};
    }

private:
    int state() {
        if (a_.nfa_.size() >= kMaxNfaStates)
            fail(label_, ": too large an automaton (over ", kMaxNfaStates, " states); use smaller repetition counts");
        a_.nfa_.emplace_back();
        return int(a_.nfa_.size()) - 1;
    }
    void link(int from, int to) { a_.nfa_[std::size_t(from)].empty.push_back(to); }

    ByteAutomaton& a_;
    const std::string& label_;
};

ByteAutomaton::ByteAutomaton(const RegexNode& root, const std::string& label) {
    RegexBuilder builder(*this, label);
    const auto [start, end] = builder.build(root);
    accept_ = end;
    // States from which the accepting state cannot be reached lead nowhere: they are dropped, so
    // that every DFA state with NFA states left can still end in a match.
    std::vector<std::vector<int>> into(nfa_.size());
    for (std::size_t s = 0; s < nfa_.size(); ++s) {
        for (const auto& edge : nfa_[s].edges) into[std::size_t(edge[2])].push_back(int(s));
        for (int t : nfa_[s].empty) into[std::size_t(t)].push_back(int(s));
    }
    std::vector<bool> live(nfa_.size(), false);
    std::vector<int> stack = {accept_};
    live[std::size_t(accept_)] = true;
    while (!stack.empty()) {
        const int s = stack.back();
        stack.pop_back();
        for (int from : into[std::size_t(s)])
            if (!live[std::size_t(from)]) {
                live[std::size_t(from)] = true;
                stack.push_back(from);
            }
    }
    for (auto& s : nfa_) {
        std::erase_if(s.edges, [&](const auto& edge) { return !live[std::size_t(edge[2])]; });
        std::erase_if(s.empty, [&](int t) { return !live[std::size_t(t)]; });
    }
    if (!live[std::size_t(start)]) fail(label, ": matches no text");
    intern({start});
}

int ByteAutomaton::intern(std::vector<int> set) {
    // Closed under epsilon moves, sorted.
    std::vector<bool> in(nfa_.size(), false);
    for (int s : set) in[std::size_t(s)] = true;
    for (std::size_t k = 0; k < set.size(); ++k)
        for (int t : nfa_[std::size_t(set[k])].empty)
            if (!in[std::size_t(t)]) {
                in[std::size_t(t)] = true;
                set.push_back(t);
            }
    std::sort(set.begin(), set.end());
    if (set.empty()) return kDead;
    const auto found = ids_.find(set);
    if (found != ids_.end()) return found->second;
    DfaState d;
    d.accepting = std::binary_search(set.begin(), set.end(), accept_);
    d.next.fill(-2);  // not yet computed
    d.nfa = set;
    states_.push_back(std::move(d));
    const int id = int(states_.size()) - 1;
    ids_.emplace(std::move(set), id);
    return id;
}

int ByteAutomaton::step(int state, std::uint8_t byte) {
    int& next = states_[std::size_t(state)].next[byte];
    if (next != -2) return next;
    std::vector<int> targets;
    for (int s : states_[std::size_t(state)].nfa)
        for (const auto& edge : nfa_[std::size_t(s)].edges)
            if (byte >= edge[0] && byte <= edge[1]) targets.push_back(edge[2]);
    std::sort(targets.begin(), targets.end());
    targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
    const int to = intern(std::move(targets));
    states_[std::size_t(state)].next[byte] = to;  // intern may have moved states_
    return to;
}

bool ByteAutomaton::canContinue(int state) {
    for (int b = 0; b < 256; ++b)
        if (step(state, std::uint8_t(b)) != kDead) return true;
    return false;
}

}  // namespace gpt2
