#include "model/ops/topk.h"

#include <cmath>

namespace gpt2 {

Pass topkBlockPass(ProgramCache& programs, Texture& blocks, const Texture& logits, const Texture& candidates, int vocab,
                   int blockTexels) {
    Pass pass(programs, "topk_block.frag", "", {&blocks}, {{"u_logits", &logits}, {"u_candidates", &candidates}});
    pass.set("u_vocab", vocab).set("u_block_texels", blockTexels).set("u_rank", 0).set("u_first_column", 0);
    return pass;
}

Pass topkSelectPass(ProgramCache& programs, Texture& candidates, const Texture& blocks) {
    Pass pass(programs, "topk_select.frag", "", {&candidates}, {{"u_blocks", &blocks}});
    pass.set("u_first_column", 0).set("u_logit_rows", 1);
    return pass;
}

int topkBlockTexels(int logitTexels) { return int(std::ceil(std::sqrt(double(logitTexels)))); }

int topkBlockColumns(int logitTexels) {
    const int blockTexels = topkBlockTexels(logitTexels);
    return 4 * ((logitTexels + blockTexels - 1) / blockTexels);
}

TopkOp::TopkOp(ProgramCache& programs, Texture& candidates, Texture& blocks, const Texture& logits, int vocab)
    : block_(topkBlockPass(programs, blocks, logits, candidates, vocab, topkBlockTexels(logits.layout().texelsPerRow))),
      select_(topkSelectPass(programs, candidates, blocks)) {}

void TopkOp::run(int k, int rows, int firstColumn) {
    block_.set("u_first_column", firstColumn);
    select_.set("u_first_column", firstColumn).set("u_logit_rows", rows);
    for (int rank = 0; rank < k; ++rank) {
        block_.set("u_rank", rank).run(0, rows);
        select_.run(rank, rank + 1);
    }
}

}  // namespace gpt2
