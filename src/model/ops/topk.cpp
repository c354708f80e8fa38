#include "model/ops/topk.h"

#include <cmath>
#include <string>

#include "util/error.h"

namespace gpt2 {

int topkBlockTexels(int logitTexels) { return int(std::ceil(std::sqrt(double(logitTexels)))); }

int topkBlockColumns(int logitTexels) {
    const int blockTexels = topkBlockTexels(logitTexels);
    return 4 * ((logitTexels + blockTexels - 1) / blockTexels);
}

TopkOp::Level TopkOp::level(ProgramCache& programs, Texture& candidates, Texture& blocks, Texture& heads,
                            const Texture& logits, const Texture& seen, const Texture& allowed, int vocab,
                            int blockLength, int mergeLength, int ranksPerFragment) {
    const auto maxCandidates = [](int length) { return "#define MAX_CANDIDATES " + std::to_string(length) + "\n"; };
    Level l{Pass(programs, "topk_block.frag",
                 maxCandidates(blockLength) + "#define OUTPUTS " + std::to_string(ranksPerFragment) + "\n", {&blocks},
                 {{"u_logits", &logits},
                  {"u_seen", &seen},
                  {"u_allowed", &allowed},
                  {"u_candidates", &candidates},
                  {"u_heads", &heads}}),
            Pass(programs, "topk_merge.frag", maxCandidates(mergeLength), {&candidates}, {{"u_blocks", &blocks}})};
    l.block.writeRowGroups(ranksPerFragment);
    l.block.set("u_vocab", vocab).set("u_block_texels", topkBlockTexels(logits.layout().texelsPerRow));
    return l;
}

TopkOp::TopkOp(ProgramCache& programs, Texture& candidates, Texture& blocks, Texture& heads, const Texture& logits,
               const Texture& seen, const Texture& allowed, int vocab, int ranksPerFragment)
    : ranksPerFragment_(ranksPerFragment),
      one_(level(programs, candidates, blocks, heads, logits, seen, allowed, vocab, 1, 1, ranksPerFragment)),
      many_(level(programs, candidates, blocks, heads, logits, seen, allowed, vocab, kMaxTopk, kMaxTopk,
                  ranksPerFragment)),
      // Its block pass lists each block's best in `heads` (its u_heads, unread without a threshold, is
      // `blocks`), and its merge finds the k-th best of them.
      heads_(level(programs, candidates, heads, blocks, logits, seen, allowed, vocab, 1, kMaxTopk, ranksPerFragment)) {}

void TopkOp::run(int k, int searches, int firstColumn, const TopkWarp& warp, int firstRow) {
    if (k < 1 || k > kMaxTopk) fail("top-k: k must be in [1, ", kMaxTopk, "], got ", k);
    const glm::ivec2 seed = seedHalves(warp.seed);
    auto block = [&](Level& l, int listLength, bool threshold, bool logSumExp) {
        l.block.set("u_k", listLength)
            .set("u_k_stride", rowsPerSearch(listLength))
            .set("u_first_row", firstRow)
            .set("u_first_column", firstColumn)
            .set("u_shared_row", warp.sharedRow ? 1 : 0)
            .set("u_log_sum_exp", logSumExp ? 1 : 0)
            .set("u_threshold", threshold ? 1 : 0)
            .set("u_inv_temperature", 1.0f / warp.temperature)
            .set("u_penalty", warp.repetitionPenalty)
            .set("u_masked", warp.masked ? 1 : 0)
            .set("u_gumbel", warp.gumbel ? 1 : 0)
            .set("u_seed", seed)
            .set("u_draw", warp.draw)
            .run(0, searches * rowsPerSearch(listLength));
    };
    auto merge = [&](Level& l, int listLength, int rankBegin, int rankEnd) {
        l.merge.set("u_k", listLength)
            .set("u_k_stride", rowsPerSearch(listLength))
            .set("u_first_column", firstColumn)
            .set("u_searches", searches)
            .run(rankBegin, rankEnd);
    };
    if (k <= ranksPerFragment_) {
        Level& l = k == 1 ? one_ : many_;
        block(l, k, false, warp.logSumExp);
        merge(l, k, 0, k);
        return;
    }
    // A list longer than a fragment's ranks: each block's best key, the k-th best of them as each
    // search's threshold (candidate k - 1; the k best keys all come up to it), then the keys that reach
    // it, listed by the blocks whose best does. The first block pass keeps one candidate, in
    // registers: listing each block's first ranks instead kept a sorted list in every fragment, and
    // the demo's block passes took 0.27 ms of a 124M token on an H200, not 0.19
    // (docs/benchmarks/journal.md). The log Σ exp comes with the threshold pass's lists, which every
    // block's first fragment writes.
    block(heads_, 1, false, false);
    merge(heads_, 1, k - 1, k);
    block(many_, k, true, warp.logSumExp);
    merge(many_, k, 0, k);
}

}  // namespace gpt2
