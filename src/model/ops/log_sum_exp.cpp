#include "model/ops/log_sum_exp.h"

#include "model/ops/topk.h"

namespace gpt2 {

LogSumExpOp::LogSumExpOp(ProgramCache& programs, Texture& out, Texture& blocks, const Texture& logits, int vocab)
    : blocks_(programs, "log_sum_exp_blocks.frag", "", {&blocks}, {{"u_logits", &logits}}),
      merge_(programs, "row_log_sum_exp.frag", "", {&out}, {{"u_blocks", &blocks}}) {
    blocks_.set("u_vocab", vocab).set("u_block_texels", topkBlockTexels(logits.layout().texelsPerRow));
}

void LogSumExpOp::run(int rows, int firstRow) {
    blocks_.run(0, rows);
    merge_.set("u_first_row", firstRow).run(firstRow, firstRow + rows);
}

}  // namespace gpt2
