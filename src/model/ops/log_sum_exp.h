#pragma once
// log Σ exp of rows of logits on the GPU, in two levels like the top-k (shaders/log_sum_exp_blocks.frag,
// then shaders/row_log_sum_exp.frag): each block of topkBlockTexels texels of a row in a fragment of
// its own, then one fragment per row merges its blocks.
#include "gl/pass.h"

namespace gpt2 {

class LogSumExpOp {
public:
    // `blocks`: a row of topkBlockColumns(logit texels) columns per row of logits.
    LogSumExpOp(ProgramCache& programs, Texture& out, Texture& blocks, const Texture& logits, int vocab);
    // out[firstRow + r] = log Σ exp of the first `vocab` logits of row r, for r < rows.
    void run(int rows, int firstRow = 0);

private:
    Pass blocks_, merge_;
};

}  // namespace gpt2
