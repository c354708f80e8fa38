#include "model/readouts/lens.h"

#include <algorithm>
#include <cmath>

#include "model/ops/pointwise.h"
#include "model/readouts/live_capture.h"
#include "model/readouts/readout_checks.h"
#include "util/error.h"

namespace gpt2 {

namespace {
// A chunk's rows and most of a batch more, in whole batches (they start at row 0 and read whole
// batches): a decode step's layers wait for the step's end wherever they fit (every official size on
// a GPU), as a prompt chunk's first layers do.
int residualRows(const ReadoutDecl& d) {
    const int batch = Lens::batchRows(d.model.tuning(), d.model.config());
    return (batch - 1 + d.model.tuning().prefillChunk + batch - 1) / batch * batch;
}

// scored = ln_f(lens residuals[r .. r + batch)) @ wte^T
LinearDecl lensHead(const ReadoutDecl& d, const Texture& residuals) {
    LinearDecl head = d.head;
    head.outputs = {&d.scored};
    head.x = &residuals;
    head.oneRowOnly = false;
    return head;
}
}  // namespace

int Lens::batchRows(const Tuning& tuning, const ModelConfig& config) {
    return std::min(tuning.tiledRows(config.layers), tuning.prefillChunk);
}

Lens::Lens(const ReadoutDecl& d)
    : model_(d.model),
      batchRows_(batchRows(d.model.tuning(), d.model.config())),
      residuals_(d.activations.add("lens residuals", residualRows(d), d.model.config().embedDim)),
      candidates_(
          d.activations.add("lens candidates", kMaxTopk, d.model.config().layers * d.model.tuning().prefillChunk * 4)),
      copy_(activationPass(d.model.programs(), residuals_, d.model.residual(), int(Epilogue::None))),
      head_(d.plan.linear(lensHead(d, residuals_))),
      topk_(d.model.programs(), candidates_, d.topk.blocks, d.topk.heads, d.scored, d.topk.seen, d.topk.allowed,
            d.model.config().vocabSize, d.topk.ranksPerFragment) {}

void Lens::copyLayer(int layer, int first, int count, int k) {
    if (layer == 0) waiting_ = scoredCells_ = 0;  // a new chunk (the last may have ended early)
    // Scored only when these rows would not fit: scoring after the chunk puts it behind the model's
    // own output head, which the next token waits for.
    if (waiting_ + count > residuals_.rows()) scoreWaiting(k);
    copy_.set("u_in_row_offset", first - waiting_).run(waiting_, waiting_ + count);
    waiting_ += count;
}

void Lens::finishChunk(int k) {
    scoreWaiting(k);
    scoredCells_ = 0;
}

void Lens::scoreWaiting(int k) {
    const Tuning& tuning = model_.tuning();
    TopkWarp warp;
    warp.logSumExp = true;
    // As many rows per search as the block lists hold at this k.
    const int searches = std::max(1, TopkScratch::kBlockRows / topk_.rowsPerSearch(k));
    for (int first = 0; first < waiting_; first += batchRows_) {
        const int rows = std::min(batchRows_, waiting_ - first);
        // Whole row groups where the batch has room: the rows past the cells score stale residual
        // rows that nothing reads.
        head_.run(0, first, std::min(tuning.tiledRows(rows), batchRows_));
        for (int row = 0; row < rows; row += searches)
            topk_.run(k, std::min(searches, rows - row), scoredCells_ + first + row, warp, row);
    }
    scoredCells_ += waiting_;
    waiting_ = 0;
}

void Lens::startRead(AsyncRead& read, int cells, int k) const { read.startRowStarts(candidates_, 0, k, cells); }

LensCell Lens::cell(const std::vector<float>& read, int cells, int k, int cell) {
    LensCell out;
    for (int rank = 0; rank < k; ++rank) {
        const float* c = &read[(std::size_t(rank) * std::size_t(cells) + std::size_t(cell)) * 4];
        out.ids.push_back(int(c[1]));
        out.probs.push_back(std::exp(c[0] - c[2]));
    }
    return out;
}

std::vector<std::vector<LensCell>> offlineLens(ForwardView& model, LiveCapture& live, const std::vector<int>& ids,
                                               int k) {
    const int layers = model.config().layers;
    k = checkLensTopK(k, Lens::kDefaultTopK, std::min(kMaxTopk, model.config().vocabSize));
    // The lens is a forward that captures it; the live views' own capture resumes afterwards.
    const Capture resumed = live.capture();
    live.set({k, -1});
    std::vector<CapturedPosition> positions;
    try {
        model.forward(ids, 0);
        positions = live.take(int(ids.size()));
    } catch (...) {
        live.set(resumed);
        throw;
    }
    live.set(resumed);
    std::vector<std::vector<LensCell>> out{std::size_t(layers)};
    for (CapturedPosition& p : positions)
        for (int l = 0; l < layers; ++l) out[std::size_t(l)].push_back(std::move(p.lens[std::size_t(l)]));
    return out;
}

}  // namespace gpt2
