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
                            const Texture& seen, int vocab, int length) {
    const std::string defines = "#define MAX_CANDIDATES " + std::to_string(length) + "\n";
    Level l{Pass(programs, "topk_block.frag", defines, {&blocks}, {{"u_logits", &logits}, {"u_seen", &seen}}),
            Pass(programs, "topk_merge.frag", defines, {&candidates}, {{"u_blocks", &blocks}})};
    l.block.set("u_vocab", vocab).set("u_block_texels", topkBlockTexels(logits.layout().texelsPerRow));
    return l;
}

TopkOp::TopkOp(ProgramCache& programs, Texture& candidates, Texture& blocks, const Texture& logits, const Texture& seen, int vocab)
    : one_(level(programs, candidates, blocks, logits, seen, vocab, 1)),
      many_(level(programs, candidates, blocks, logits, seen, vocab, kMaxTopk)) {}

void TopkOp::run(int k, int searches, int firstColumn, const TopkWarp& warp, int firstRow) {
    if (k < 1 || k > kMaxTopk) fail("top-k: k must be in [1, ", kMaxTopk, "], got ", k);
    Level& l = k == 1 ? one_ : many_;
    // The seed's two 32-bit halves travel as ints; the shader reads their bits back as uints.
    const glm::ivec2 seed(int(std::uint32_t(warp.seed)), int(std::uint32_t(warp.seed >> 32)));
    l.block.set("u_k", k)
        .set("u_shared_row", warp.sharedRow ? 1 : 0)
        .set("u_log_sum_exp", warp.logSumExp ? 1 : 0)
        .set("u_inv_temperature", 1.0f / warp.temperature)
        .set("u_penalty", warp.repetitionPenalty)
        .set("u_gumbel", warp.gumbel ? 1 : 0)
        .set("u_seed", seed)
        .set("u_draw", warp.draw)
        .set("u_first_row", firstRow)
        .run(0, searches * k);
    l.merge.set("u_k", k).set("u_first_column", firstColumn).set("u_searches", searches).run(0, k);
}

}  // namespace gpt2
