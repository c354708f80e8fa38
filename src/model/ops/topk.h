#pragma once
// Top-k of rows of logits on the GPU in two passes (shaders/topk_block.frag, topk_merge.frag): each
// block of logit texels (topkBlockTexels) lists its best k, then one fragment per rank merges the
// blocks' lists. Where k exceeds the ranks one fragment writes, each block's best key is found first,
// and the k-th best of them is each search's threshold: only the blocks whose best comes up to it list
// their keys that do. The keys can be the logits as sampling warps them
// (repetition penalty, temperature, Gumbel noise), and the search can carry each row's log Σ exp along.
#include <cstdint>

#include "gl/pass.h"

namespace gpt2 {

// The most candidates one search lists.
constexpr int kMaxTopk = 64;

// Blocks of about sqrt(texels) texels balance the two levels' work. Half as many texels a block was
// 6 µs a greedy token faster on an H200 (with the candidate in registers and the merge's heap), but
// doubles the blocks' scratch textures: 0.46 MB more for GPT-2's vocabulary, which a small model's
// GPU memory notices (docs/benchmarks/journal.md, runs AT and AX).
int topkBlockTexels(int logitTexels);
// Columns (floats) of a row of the `blocks` texture for rows of `logitTexels` texels of logits.
int topkBlockColumns(int logitTexels);

// A 64-bit seed as the shaders take it: its two 32-bit halves as ints (read back as uints).
inline glm::ivec2 seedHalves(std::uint64_t seed) { return {int(std::uint32_t(seed)), int(std::uint32_t(seed >> 32))}; }

// What a search does to each logit before ranking it: key = (penalised where `seen`) logit / T, plus
// Gumbel noise of (seed, draw, id) when `gumbel`; where `masked`, a token whose bit in `allowed` is
// clear gets kBannedKey.
struct TopkWarp {
    float temperature = 1.0f;
    float repetitionPenalty = 1.0f;
    bool masked = false;
    bool gumbel = false;
    std::uint64_t seed = 0;
    int draw = 0;
    // Every search reads logits row 0, search g as draw `draw + g` (many draws of one distribution).
    bool sharedRow = false;
    // Carry log Σ exp of the (penalised, tempered, noise-free) values in each candidate's .z.
    bool logSumExp = false;
};

class TopkOp {
public:
    // `blocks` and `heads`: rows of topkBlockColumns(logit texels) columns, interleaved over
    // `ranksPerFragment` pages: each first-level fragment writes that many ranks through as many
    // render targets (at most the renderer's). A search takes rowsPerSearch(k) rows of `blocks`, and
    // ranksPerFragment of `heads` (its blocks' best keys, in the first, where k is larger).
    // `seen`: one row of vocabulary texels, lane j of texel t 1.0 where token 4t + j is penalised;
    // `allowed`: one row, bit b of float f (16 a float) set where token 16f + b may be drawn (read where
    // it is masked).
    TopkOp(ProgramCache& programs, Texture& candidates, Texture& blocks, Texture& heads, const Texture& logits,
           const Texture& seen, const Texture& allowed, int vocab, int ranksPerFragment);
    int rowsPerSearch(int k) const { return (k + ranksPerFragment_ - 1) / ranksPerFragment_ * ranksPerFragment_; }
    // candidates[rank][firstColumn + g] = (key, id, log Σ exp, 0) of the k best keys of search g < searches
    // (of logits row firstRow + g), best first, ties to the smaller id; the texels of other columns
    // keep what they hold.
    void run(int k, int searches = 1, int firstColumn = 0, const TopkWarp& warp = {}, int firstRow = 0);

private:
    // A block pass and its merge, each keeping one candidate (the single best stays in registers) or up
    // to kMaxTopk.
    struct Level {
        Pass block, merge;
    };
    // The block pass writes `blocks` (reading `heads`, with a threshold) or `heads`; the merge reads what
    // the block pass writes.
    static Level level(ProgramCache& programs, Texture& candidates, Texture& blocks, Texture& heads,
                       const Texture& logits, const Texture& seen, const Texture& allowed, int vocab, int blockLength,
                       int mergeLength, int ranksPerFragment);
    int ranksPerFragment_;
    Level one_, many_, heads_;
};

}  // namespace gpt2
