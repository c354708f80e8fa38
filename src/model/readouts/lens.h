#pragma once
// The logit lens of a chunk's positions: after each block, the rows that get a lens are copied out of
// the residual stream; when the next block's rows would not fit, and once the chunk has run, the
// output head scores them a batch at a time (a decode step's layers in one run, so each weight fetch
// serves them all) and one top-k search per row lists its k most likely tokens with the row's
// log-sum-exp. Live capture (live_capture.h) reads them back.
#include <vector>

#include "gl/async_read.h"
#include "model/ops/topk.h"
#include "model/readouts/readout_decl.h"

namespace gpt2 {

// A position's lens at one layer: the k most likely next tokens, best first.
struct LensCell {
    std::vector<int> ids;
    std::vector<float> probs;
};

class LiveCapture;

// The logit lens of `ids` run through `model` from position 0 as a new sequence, captured as the
// live views capture it (`live`, whose own capture resumes afterwards) and ending as a forward does
// (the last position's logits ready): for each block l and position t, the k most likely next
// tokens of softmax(lm_head(ln_f(the residual stream after block l))), best first; the last block's
// is the model's own distribution. Result: [layer][position]. k = 0: Lens::kDefaultTopK.
std::vector<std::vector<LensCell>> offlineLens(ForwardView& model, LiveCapture& live, const std::vector<int>& ids,
                                               int k);

class Lens {
public:
    static constexpr int kDefaultTopK = 5;
    // Residual rows scored per run of the head: a decode step's layers together, no more than its
    // LayerNorm's chunk. The `scored` texture of ReadoutDecl has at least this many rows.
    static int batchRows(const Tuning& tuning, const ModelConfig& config);

    explicit Lens(const ReadoutDecl& decl);
    // After block `layer`: positions [first, first + count) of the chunk get the lens, their top k
    // listed as cells layer * count .. + count (scored when the rows waiting would overflow).
    void copyLayer(int layer, int first, int count, int k);
    // Once the chunk has run: the top k of the rows still waiting.
    void finishChunk(int k);
    // Starts reading what score() listed.
    void startRead(AsyncRead& read, int cells, int k) const;
    // Cell `cell` of such a read: probabilities from each candidate's logit and its row's log-sum-exp.
    static LensCell cell(const std::vector<float>& read, int cells, int k, int cell);

private:
    void scoreWaiting(int k);

    ForwardView& model_;
    int batchRows_;
    int waiting_ = 0;      // residual rows copied and not yet scored, from row 0
    int scoredCells_ = 0;  // cells of the chunk scored so far
    Texture& residuals_;   // [a chunk + under a batch, C]: rows waiting, cell scoredCells_ + r at row r
    Texture& candidates_;  // [k, layers * chunk (logit, id, lse)]
    Pass copy_;
    Linear head_;
    TopkOp topk_;
};

}  // namespace gpt2
