// What the model reads back besides the next token's logits and candidates: attention probabilities,
// the log-probability of each position's next token, the residual stream and the logit lens.
#include <algorithm>
#include <cmath>
#include <functional>

#include "model/gpt2_model.h"
#include "util/error.h"

namespace gpt2 {

void Gpt2Model::runChunks(int count, int blocks, const std::function<void(int start, int n)>& after) {
    for (int start = 0; start < count; start += tuning_.prefillChunk) {
        const int n = std::min(tuning_.prefillChunk, count - start);
        embed_->run(start, start + n);
        runBlocks(blocks, start, n);
        after(start, n);
    }
}

std::vector<float> Gpt2Model::attention(const std::vector<int>& ids, int layer) {
    if (layer < 0 || layer >= config_.layers) fail("attention: layer ", layer, " outside [0, ", config_.layers, ")");
    chunkNext_ = chunkEnd_ = 0;  // a forward in progress cannot go on over the rewritten id rows
    uploadIds(ids, 0);
    const int count = int(ids.size()), heads = config_.heads, chunk = std::min(tuning_.prefillChunk, count);
    // Rows are (query, head) of a chunk.
    Texture probs(TensorLayout::make(chunk * heads, count, tuning_.caps.limits, "attention probabilities"),
                  TexelFormat::Float32, "attention probabilities");
    AttentionProbsOp probsOp(programs_, probs, attentionScratch_, shape_);
    std::vector<float> out(std::size_t(heads) * count * count);  // heads x T x T
    runChunks(count, layer, [&](int start, int n) {
        runAttentionScores(layer, start, n);
        probsOp.run(start, n);
        const std::vector<float> rows = probs.readRows(0, n * heads);
        readbackBytes_ += std::int64_t(rows.size()) * 4;
        for (int q = 0; q < n; ++q)
            for (int h = 0; h < heads; ++h)
                std::copy_n(rows.begin() + (std::int64_t(q) * heads + h) * count, count,
                            out.begin() + (std::int64_t(h) * count + start + q) * count);
    });
    return out;
}

std::vector<float> Gpt2Model::tokenLogProbs(const std::vector<int>& ids) {
    if (ids.size() < 2) fail("tokenLogProbs: needs at least 2 tokens (the first is only context), got ", ids.size());
    beginForward(ids, 0);
    const int count = int(ids.size());
    std::vector<float> out;
    runChunks(count, config_.layers, [&](int start, int n) {
        // Rows of this chunk only (the later ones have not run yet), and no last position: it has no next token.
        const int end = std::min(start + n, count - 1);
        for (int row = start; row < end; row += kScoreRows) {
            const int rows = std::min(kScoreRows, end - row);
            scoreHead_->run(0, row, rows);
            scoredLse_->run(rows);
            tokenLogProb_->set("u_first", row).run(0, rows);
            const std::vector<float> values = logProbs_->readRows(0, rows);
            readbackBytes_ += std::int64_t(rows) * 16;
            out.insert(out.end(), values.begin(), values.end());
        }
    });
    chunkNext_ = chunkEnd_ = 0;
    lastPosition_ = -1;  // no position's logits are in the logits texture
    return out;
}

std::vector<float> Gpt2Model::hiddenStates(const std::vector<int>& ids, int layer) {
    if (layer < 0 || layer >= config_.layers) fail("hiddenStates: layer ", layer, " outside [0, ", config_.layers, ")");
    beginForward(ids, 0);
    const int count = int(ids.size());
    std::vector<float> out;
    runChunks(count, layer + 1, [&](int start, int n) {
        const std::vector<float> rows = residual_->readRows(start, n);
        readbackBytes_ += std::int64_t(rows.size()) * 4;
        out.insert(out.end(), rows.begin(), rows.end());
    });
    chunkNext_ = chunkEnd_ = 0;
    lastPosition_ = -1;  // the later blocks did not run: no logits, and the cache holds no sequence
    return out;
}

std::vector<std::vector<Gpt2Model::LensCell>> Gpt2Model::lens(const std::vector<int>& ids, int k) {
    if (k == 0) k = kDefaultLensTopK;
    if (k < 1 || k > std::min(kMaxCandidates, config_.vocabSize))
        fail("lens: top-k must be in [1, ", std::min(kMaxCandidates, config_.vocabSize), "], got ", k);
    // The lens is a forward that captures it; the live views' own capture resumes afterwards.
    const Capture live = capture_;
    setCapture({k, -1});
    std::vector<CapturedPosition> positions;
    try {
        forward(ids, 0);
        positions = takeCaptured(int(ids.size()));
    } catch (...) {
        setCapture(live);
        throw;
    }
    setCapture(live);
    std::vector<std::vector<LensCell>> out(std::size_t(config_.layers));
    for (CapturedPosition& p : positions)
        for (int l = 0; l < config_.layers; ++l) out[std::size_t(l)].push_back(std::move(p.lens[std::size_t(l)]));
    return out;
}

void Gpt2Model::setCapture(const Capture& capture) {
    if (capture.lensTopK < 0 || capture.lensTopK > kMaxCandidates || capture.lensTopK > config_.vocabSize)
        fail("capture: lens top-k must be in [0, ", std::min(kMaxCandidates, config_.vocabSize), "], got ",
             capture.lensTopK);
    if (capture.lensPositions < 0) fail("capture: lens positions must be 0 (all) or more, got ", capture.lensPositions);
    if (capture.attentionLayer < -1 || capture.attentionLayer >= config_.layers)
        fail("capture: attention layer ", capture.attentionLayer, " outside [0, ", config_.layers, ")");
    capture_ = capture;
    captured_.clear();
    dropCaptureReadsFrom(0);
    if (capture.attentionLayer < 0) {
        captureProbsOp_.reset();
        captureProbs_.reset();
    } else if (!captureProbs_) {
        const char* name = "captured attention probabilities";
        captureProbs_ = std::make_unique<Texture>(
            TensorLayout::make(tuning_.prefillChunk * config_.heads, config_.contextLength, tuning_.caps.limits, name),
            TexelFormat::Float32, name);
        captureProbsOp_ = std::make_unique<AttentionProbsOp>(programs_, *captureProbs_, attentionScratch_, shape_);
    }
}

void Gpt2Model::endCapture() {
    capture_ = {};
    captured_.clear();
    dropCaptureReadsFrom(0);
}

std::vector<Gpt2Model::CapturedPosition> Gpt2Model::takeCaptured(int end) {
    while (captureInFlight_ > 0 && captureReads_[captureFirst_].pos0 < end) finishCaptureRead();
    std::vector<CapturedPosition> out;
    const auto last = captured_.lower_bound(end);
    for (auto it = captured_.begin(); it != last; ++it) out.push_back(std::move(it->second));
    captured_.erase(captured_.begin(), last);
    return out;
}

void Gpt2Model::captureLayer(int layer, int pos0, int count, int lensFirst, int lensCount) {
    if (layer == capture_.attentionLayer) {
        // The scratch still holds this layer's scores of the chunk: its attention computed them.
        captureProbsOp_->run(pos0, count);
    }
    if (lensCount == 0) return;
    const int first = layer * lensCount;
    lensCopy_->set("u_in_row_offset", lensFirst - first).run(first, first + lensCount);
}

int Gpt2Model::lensBatchRows() const { return std::min(tuning_.tiledRows(config_.layers), tuning_.prefillChunk); }

void Gpt2Model::scoreLens(int lensCount) {
    const int cells = config_.layers * lensCount, batch = lensBatchRows();
    TopkWarp warp;
    warp.logSumExp = true;
    for (int first = 0; first < cells; first += batch) {
        const int rows = std::min(batch, cells - first);
        // Whole row groups where the batch has room: the rows past the cells score stale residual
        // rows that nothing reads.
        lensHead_->run(0, first, std::min(tuning_.tiledRows(rows), batch));
        // As many rows per search as the block lists hold at this k.
        const int searches = std::max(1, kTopkBlockRows / lensTopk_->rowsPerSearch(capture_.lensTopK));
        for (int row = 0; row < rows; row += searches)
            lensTopk_->run(capture_.lensTopK, std::min(searches, rows - row), first + row, warp, row);
    }
}

void Gpt2Model::readCaptured(int pos0, int count, int lensFirst, int lensCount) {
    if (captureInFlight_ == kCaptureReads) finishCaptureRead();
    CaptureRead& r = captureReads_[(captureFirst_ + captureInFlight_) % kCaptureReads];
    r.pos0 = pos0;
    r.count = count;
    r.lensFirst = lensFirst;
    r.lensCount = lensCount;
    // Only the keys of the chunk's queries: 0 .. pos0 + count - 1.
    if (capture_.attentionLayer >= 0)
        r.attention.startRowStarts(*captureProbs_, 0, count * config_.heads, (pos0 + count + 3) / 4);
    // [k][cells (logit, id, log-sum-exp of the cell's row)]
    if (lensCount > 0) r.lens.startRowStarts(*lensCandidates_, 0, capture_.lensTopK, config_.layers * lensCount);
    ++captureInFlight_;
}

void Gpt2Model::finishCaptureRead() {
    CaptureRead& r = captureReads_[captureFirst_];
    captureFirst_ = (captureFirst_ + 1) % kCaptureReads;
    --captureInFlight_;
    for (int p = r.pos0; p < r.pos0 + r.count; ++p) captured_[p] = {p, {}, {}};
    if (capture_.attentionLayer >= 0) {
        const int stride = (r.pos0 + r.count + 3) / 4 * 4;
        const std::vector<float> rows = r.attention.take();
        readbackBytes_ += std::int64_t(rows.size()) * 4;
        for (int q = 0; q < r.count; ++q) {
            std::vector<float>& probs = captured_[r.pos0 + q].attention;
            for (int h = 0; h < config_.heads; ++h) {
                const auto row = rows.begin() + (std::int64_t(q) * config_.heads + h) * stride;
                probs.insert(probs.end(), row, row + r.pos0 + q + 1);
            }
        }
    }
    const int k = capture_.lensTopK, cells = config_.layers * r.lensCount;
    if (cells == 0) return;
    const std::vector<float> candidates = r.lens.take();
    readbackBytes_ += std::int64_t(candidates.size()) * 4;
    for (int q = 0; q < r.lensCount; ++q) {
        std::vector<LensCell>& lens = captured_[r.lensFirst + q].lens;
        lens.resize(std::size_t(config_.layers));
        for (int l = 0; l < config_.layers; ++l) {
            const std::size_t cell = std::size_t(l) * std::size_t(r.lensCount) + std::size_t(q);
            for (int rank = 0; rank < k; ++rank) {
                const float* c = &candidates[(std::size_t(rank) * std::size_t(cells) + cell) * 4];
                lens[std::size_t(l)].ids.push_back(int(c[1]));
                lens[std::size_t(l)].probs.push_back(std::exp(c[0] - c[2]));
            }
        }
    }
}

void Gpt2Model::dropCaptureReadsFrom(int pos0) {
    while (captureInFlight_ > 0) {
        CaptureRead& newest = captureReads_[(captureFirst_ + captureInFlight_ - 1) % kCaptureReads];
        if (newest.pos0 < pos0) break;
        newest.attention.drop();
        newest.lens.drop();
        --captureInFlight_;
    }
    // A read that straddles pos0 comes back whole; its positions from pos0 on are erased with the rest.
    while (captureInFlight_ > 0) {
        const CaptureRead& newest = captureReads_[(captureFirst_ + captureInFlight_ - 1) % kCaptureReads];
        if (newest.pos0 + newest.count <= pos0) break;
        finishCaptureRead();
    }
}
}  // namespace gpt2
