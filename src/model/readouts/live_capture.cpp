#include "model/readouts/live_capture.h"

#include <algorithm>

#include "util/error.h"

namespace gpt2 {

LiveCapture::LiveCapture(const ReadoutDecl& decl) : model_(decl.model), lens_(decl) {}

LiveCapture::~LiveCapture() = default;

void LiveCapture::set(const Capture& capture) {
    const ModelConfig& c = model_.config();
    const int maxK = std::min(kMaxTopk, c.vocabSize);
    if (capture.lensTopK < 0 || capture.lensTopK > maxK)
        fail("capture: lens top-k must be in [0, ", maxK, "], got ", capture.lensTopK);
    if (capture.lensPositions < 0) fail("capture: lens positions must be 0 (all) or more, got ", capture.lensPositions);
    if (capture.attentionLayer < -1 || capture.attentionLayer >= c.layers)
        fail("capture: attention layer ", capture.attentionLayer, " outside [0, ", c.layers, ")");
    capture_ = capture;
    captured_.clear();
    dropReadsFrom(0);
    if (capture.attentionLayer < 0) {
        probsOp_.reset();
        probs_.reset();
    } else if (!probs_) {
        const char* name = "captured attention probabilities";
        const Tuning& tuning = model_.tuning();
        probs_ = std::make_unique<Texture>(
            TensorLayout::make(tuning.prefillChunk * c.heads, c.contextLength, tuning.caps.limits, name),
            TexelFormat::Float32, name);
        probsOp_ = std::make_unique<AttentionProbsOp>(model_.programs(), *probs_, model_.attentionScratch(),
                                                      model_.attentionShape());
    }
    const bool capturing = capture.lensTopK > 0 || capture.attentionLayer >= 0;
    model_.observeChunks(capturing ? this : nullptr);
}

void LiveCapture::end() {
    capture_ = {};
    captured_.clear();
    dropReadsFrom(0);
    model_.observeChunks(nullptr);
}

std::vector<CapturedPosition> LiveCapture::take(int end) {
    while (inFlight_ > 0 && reads_[first_].pos0 < end) finishRead();
    std::vector<CapturedPosition> out;
    const auto last = captured_.lower_bound(end);
    for (auto it = captured_.begin(); it != last; ++it) out.push_back(std::move(it->second));
    captured_.erase(captured_.begin(), last);
    return out;
}

void LiveCapture::startRun(int pos0, int end) {
    dropReadsFrom(pos0);
    captured_.erase(captured_.lower_bound(pos0), captured_.end());
    lensFrom_ = capture_.lensPositions > 0 ? std::max(pos0, end - capture_.lensPositions) : pos0;
}

LiveCapture::LensRange LiveCapture::lensRange(int pos0, int count) const {
    const int first = std::max(pos0, lensFrom_);
    return {first, capture_.lensTopK > 0 ? std::max(0, pos0 + count - first) : 0};
}

void LiveCapture::afterLayer(int layer, int pos0, int count) {
    // The scratch still holds this layer's scores of the chunk: its attention computed them.
    if (layer == capture_.attentionLayer) probsOp_->run(pos0, count);
    const LensRange lens = lensRange(pos0, count);
    if (lens.count > 0) lens_.copyLayer(layer, lens.first, lens.count, capture_.lensTopK);
}

void LiveCapture::afterChunk(int pos0, int count) {
    const LensRange lens = lensRange(pos0, count);
    const int cells = model_.config().layers * lens.count;
    if (cells > 0) lens_.finishChunk(capture_.lensTopK);
    if (inFlight_ == kReads) finishRead();
    Read& r = reads_[(first_ + inFlight_) % kReads];
    r.pos0 = pos0;
    r.count = count;
    r.lensFirst = lens.first;
    r.lensCount = lens.count;
    // Only the keys of the chunk's queries: 0 .. pos0 + count - 1.
    if (capture_.attentionLayer >= 0)
        r.attention.startRowStarts(*probs_, 0, count * model_.config().heads, (pos0 + count + 3) / 4);
    if (cells > 0) lens_.startRead(r.lens, cells, capture_.lensTopK);
    ++inFlight_;
}

void LiveCapture::finishRead() {
    Read& r = reads_[first_];
    first_ = (first_ + 1) % kReads;
    --inFlight_;
    const int heads = model_.config().heads, layers = model_.config().layers;
    for (int p = r.pos0; p < r.pos0 + r.count; ++p) captured_[p] = {p, {}, {}};
    if (capture_.attentionLayer >= 0) {
        const int stride = (r.pos0 + r.count + 3) / 4 * 4;
        const std::vector<float> rows = model_.readback().take(r.attention);
        for (int q = 0; q < r.count; ++q) {
            std::vector<float>& probs = captured_[r.pos0 + q].attention;
            for (int h = 0; h < heads; ++h) {
                const auto row = rows.begin() + (std::int64_t(q) * heads + h) * stride;
                probs.insert(probs.end(), row, row + r.pos0 + q + 1);
            }
        }
    }
    const int cells = layers * r.lensCount;
    if (cells == 0) return;
    const std::vector<float> candidates = model_.readback().take(r.lens);
    for (int q = 0; q < r.lensCount; ++q) {
        std::vector<LensCell>& lens = captured_[r.lensFirst + q].lens;
        for (int l = 0; l < layers; ++l)
            lens.push_back(Lens::cell(candidates, cells, capture_.lensTopK, l * r.lensCount + q));
    }
}

void LiveCapture::dropReadsFrom(int pos0) {
    while (inFlight_ > 0) {
        Read& newest = reads_[(first_ + inFlight_ - 1) % kReads];
        if (newest.pos0 < pos0) break;
        newest.attention.drop();
        newest.lens.drop();
        --inFlight_;
    }
    // A read that straddles pos0 comes back whole; its positions from pos0 on are erased with the rest.
    while (inFlight_ > 0) {
        const Read& newest = reads_[(first_ + inFlight_ - 1) % kReads];
        if (newest.pos0 + newest.count <= pos0) break;
        finishRead();
    }
}

}  // namespace gpt2
