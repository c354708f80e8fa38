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

TopkOp::Level TopkOp::level(ProgramCache& programs, Texture& candidates, Texture& blocks, const Texture& logits,
                            const Texture& seen, int vocab, int length, int ranksPerFragment) {
    const std::string defines = "#define MAX_CANDIDATES " + std::to_string(length) + "\n";
    Level l{Pass(programs, "topk_block.frag", defines + "#define OUTPUTS " + std::to_string(ranksPerFragment) + "\n", {&blocks},
                 {{"u_logits", &logits}, {"u_seen", &seen}, {"u_candidates", &candidates}}),
            Pass(programs, "topk_merge.frag", defines, {&candidates}, {{"u_blocks", &blocks}})};
    l.block.writeRowGroups(ranksPerFragment);
    l.block.set("u_vocab", vocab).set("u_block_texels", topkBlockTexels(logits.layout().texelsPerRow));
    return l;
}

TopkOp::TopkOp(ProgramCache& programs, Texture& candidates, Texture& blocks, const Texture& logits, const Texture& seen, int vocab,
               int ranksPerFragment)
    : ranksPerFragment_(ranksPerFragment),
      one_(level(programs, candidates, blocks, logits, seen, vocab, 1, ranksPerFragment)),
      many_(level(programs, candidates, blocks, logits, seen, vocab, kMaxTopk, ranksPerFragment)) {}

void TopkOp::run(int k, int searches, int firstColumn, const TopkWarp& warp, int firstRow) {
    if (k < 1 || k > kMaxTopk) fail("top-k: k must be in [1, ", kMaxTopk, "], got ", k);
    // The seed's two 32-bit halves travel as ints; the shader reads their bits back as uints.
    const glm::ivec2 seed(int(std::uint32_t(warp.seed)), int(std::uint32_t(warp.seed >> 32)));
    auto block = [&](Level& l, int listLength, bool threshold) {
        l.block.set("u_k", listLength)
            .set("u_k_stride", rowsPerSearch(listLength))
            .set("u_first_row", firstRow)
            .set("u_first_column", firstColumn)
            .set("u_shared_row", warp.sharedRow ? 1 : 0)
            .set("u_log_sum_exp", warp.logSumExp ? 1 : 0)
            .set("u_threshold", threshold ? 1 : 0)
            .set("u_inv_temperature", 1.0f / warp.temperature)
            .set("u_penalty", warp.repetitionPenalty)
            .set("u_gumbel", warp.gumbel ? 1 : 0)
            .set("u_seed", seed)
            .set("u_draw", warp.draw)
            .run(0, searches * rowsPerSearch(listLength));
    };
    auto merge = [&](int listLength, int rankBegin, int rankEnd) {
        many_.merge.set("u_k", listLength)
            .set("u_k_stride", rowsPerSearch(listLength))
            .set("u_first_column", firstColumn)
            .set("u_searches", searches)
            .run(rankBegin, rankEnd);
    };
    if (k == 1) {
        block(one_, 1, false);
        one_.merge.set("u_k", 1).set("u_k_stride", rowsPerSearch(1)).set("u_first_column", firstColumn).set("u_searches", searches).run(0, 1);
        return;
    }
    // Lists longer than a fragment's ranks cost a fragment an insertion per key that enters: first
    // the blocks' maxima, and their k-th best as each search's threshold (candidate k - 1).
    const bool threshold = k > ranksPerFragment_;
    if (threshold) {
        block(one_, 1, false);
        merge(1, k - 1, k);
    }
    block(many_, k, threshold);
    merge(k, 0, k);
}

}  // namespace gpt2
