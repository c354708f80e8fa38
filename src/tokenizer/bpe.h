#pragma once
// Byte-pair encoding of one pre-tokenized piece, working on token ids rather than strings.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpt2 {

// One line of merges.txt resolved to ids: left + right -> merged.
struct BpeMerge {
    int left;
    int right;
    int merged;
};

class BytePairEncoder {
public:
    // byteIds: the id of each single-byte token. merges: in rank order (earlier merges win).
    BytePairEncoder(const std::array<int, 256>& byteIds, const std::vector<BpeMerge>& merges);

    // Appends the ids of piece (raw bytes, non-empty) to ids.
    void encodePiece(std::string_view piece, std::vector<int>& ids) const;

private:
    struct Merge {
        int rank;
        int merged;
    };
    static std::uint64_t pairKey(int left, int right);
    std::vector<int> merge(std::string_view piece) const;

    std::array<int, 256> byteIds_;
    std::unordered_map<std::uint64_t, Merge> merges_;
    // Text repeats its words, so most pieces are found here; the cache is emptied when it fills so
    // that memory stays bounded over a long session.
    mutable std::unordered_map<std::string, std::vector<int>> cache_;
};

}  // namespace gpt2
