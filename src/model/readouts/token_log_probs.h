#pragma once
// The log-probability of each position's next token (perplexity): the output head over a few rows at
// a time, each row's log-sum-exp and the next token's logit on the GPU, one float per position read.
#include <vector>

#include "model/ops/log_sum_exp.h"
#include "model/readouts/readout_decl.h"

namespace gpt2 {

class TokenLogProbs {
public:
    // Rows the output head scores per run.
    static constexpr int kRows = 8;
    explicit TokenLogProbs(const ReadoutDecl& decl);
    ~TokenLogProbs();
    // log p(ids[t + 1] | ids[0..t]) for t < T - 1: runs `ids` from position 0, replacing the cache
    // rows of whatever sequence was there. Blocks on each read (the CLI's and tests' use).
    std::vector<float> run(const std::vector<int>& ids);

private:
    ForwardView& model_;
    Linear head_;
    Texture &logProbs_, &logSumExp_;
    LogSumExpOp logSumExpOp_;
    Pass tokenLogProb_;
};

}  // namespace gpt2
