#include "model/readouts/token_log_probs.h"

#include <algorithm>

#include "model/ops/pointwise.h"
#include "model/ops/topk.h"
#include "model/readouts/readout_checks.h"
#include "util/error.h"

namespace gpt2 {

namespace {
// scored = ln_f(x[p .. p + kRows)) @ wte^T: the output head over rows
LinearDecl scoredRows(const ReadoutDecl& d) {
    LinearDecl rows = d.head;
    rows.outputs = {&d.scored};
    rows.oneRowOnly = false;
    return rows;
}
}  // namespace

// lse[r] = log Σ exp scored[r]; logProbs[r] = scored[r][ids[p + r + 1]] - lse[r]
TokenLogProbs::TokenLogProbs(const ReadoutDecl& d)
    : model_(d.model),
      head_(d.plan.linear(scoredRows(d))),
      logProbs_(d.activations.add("token log-probabilities", kRows, 1)),  // [kRows, 1]
      logSumExp_(d.activations.add("scored log-sum-exp", kRows, 1)),      // [kRows, 1]
      logSumExpOp_(
          d.model.programs(), logSumExp_,
          d.activations.add("scored log-sum-exp blocks", kRows, topkBlockColumns(d.scored.layout().texelsPerRow)),
          d.scored, d.model.config().vocabSize),
      tokenLogProb_(tokenLogProbPass(d.model.programs(), logProbs_, d.scored, logSumExp_, d.ids)) {}

TokenLogProbs::~TokenLogProbs() = default;

std::vector<float> TokenLogProbs::run(const std::vector<int>& ids) {
    checkTokenLogProbsIds(ids);
    const int count = int(ids.size());
    std::vector<float> out;
    model_.runSequence(ids, model_.config().layers, [&](int start, int n) {
        // Rows of this chunk only (the later ones have not run yet), and no last position: it has no next token.
        const int end = std::min(start + n, count - 1);
        for (int row = start; row < end; row += kRows) {
            const int rows = std::min(kRows, end - row);
            head_.run(0, row, rows);
            logSumExpOp_.run(rows);
            tokenLogProb_.set("u_first", row).run(0, rows);
            const std::vector<float> values = model_.readback().rows(logProbs_, 0, rows);
            out.insert(out.end(), values.begin(), values.end());
        }
    });
    model_.endSequence();  // no position's logits are in the logits texture
    return out;
}

}  // namespace gpt2
