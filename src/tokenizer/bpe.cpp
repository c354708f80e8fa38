#include "tokenizer/bpe.h"

#include <queue>

namespace gpt2 {
namespace {

constexpr std::size_t kCacheCapacity = 1 << 15;

struct Symbol {
    int id;
    int prev;  // -1: none
    int next;  // -1: none
    bool mergedAway;
};

struct Candidate {
    int rank;
    int pos;     // index of the left symbol
    int merged;  // id the pair becomes
    // Lowest rank first, then leftmost: the order of Hugging Face's BPE, which equals GPT-2's
    // "merge every occurrence of the best pair" for the merges of a trained tokenizer.
    bool operator<(const Candidate& other) const { return rank != other.rank ? rank > other.rank : pos > other.pos; }
};

}  // namespace

BytePairEncoder::BytePairEncoder(const std::array<int, 256>& byteIds, const std::vector<BpeMerge>& merges)
    : byteIds_(byteIds) {
    merges_.reserve(merges.size());
    for (std::size_t rank = 0; rank < merges.size(); ++rank) {
        const BpeMerge& m = merges[rank];
        merges_.emplace(pairKey(m.left, m.right), Merge{static_cast<int>(rank), m.merged});
    }
}

std::uint64_t BytePairEncoder::pairKey(int left, int right) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

void BytePairEncoder::encodePiece(std::string_view piece, std::vector<int>& ids) const {
    if (piece.size() == 1) {
        ids.push_back(byteIds_[static_cast<unsigned char>(piece[0])]);
        return;
    }
    std::string key(piece);
    auto cached = cache_.find(key);
    if (cached == cache_.end()) {
        if (cache_.size() >= kCacheCapacity) cache_.clear();
        cached = cache_.emplace(std::move(key), merge(piece)).first;
    }
    ids.insert(ids.end(), cached->second.begin(), cached->second.end());
}

std::vector<int> BytePairEncoder::merge(std::string_view piece) const {
    const int n = static_cast<int>(piece.size());
    std::vector<Symbol> symbols(n);
    for (int i = 0; i < n; ++i)
        symbols[i] = {byteIds_[static_cast<unsigned char>(piece[i])], i - 1, i + 1 < n ? i + 1 : -1, false};

    std::priority_queue<Candidate> queue;
    const auto propose = [&](int pos) {
        const int next = symbols[pos].next;
        if (next < 0) return;
        const auto found = merges_.find(pairKey(symbols[pos].id, symbols[next].id));
        if (found != merges_.end()) queue.push({found->second.rank, pos, found->second.merged});
    };
    for (int i = 0; i + 1 < n; ++i) propose(i);

    while (!queue.empty()) {
        const Candidate top = queue.top();
        queue.pop();
        Symbol& left = symbols[top.pos];
        // Stale entries are skipped: an earlier merge consumed one side or changed the pair.
        if (left.mergedAway || left.next < 0) continue;
        const auto current = merges_.find(pairKey(left.id, symbols[left.next].id));
        if (current == merges_.end() || current->second.rank != top.rank) continue;

        Symbol& right = symbols[left.next];
        right.mergedAway = true;
        left.id = top.merged;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = top.pos;
        if (left.prev >= 0) propose(left.prev);
        propose(top.pos);
    }

    std::vector<int> ids;
    for (int i = 0; i >= 0; i = symbols[i].next) ids.push_back(symbols[i].id);
    return ids;
}

}  // namespace gpt2
