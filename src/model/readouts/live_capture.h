#pragma once
// Live views: what every forward captures at each position it runs, block by block, without running
// anything twice: the logit lens (lensTopK > 0) and one layer's attention probabilities
// (attentionLayer >= 0). Each capturing chunk ends with one read of each, in flight until the
// positions are taken (a ring of kReads: a step's capture travels while the next step runs).
#include <map>
#include <memory>
#include <vector>

#include "gl/async_read.h"
#include "model/ops/attention.h"
#include "model/readouts/lens.h"

namespace gpt2 {

// What to capture. The lens covers the last lensPositions positions of each forward (0: all of
// them; a decode step's one position is always covered).
struct Capture {
    int lensTopK = 0;
    int attentionLayer = -1;
    int lensPositions = 0;
};

struct CapturedPosition {
    int position = 0;
    std::vector<LensCell> lens;    // per layer; none outside Capture::lensPositions
    std::vector<float> attention;  // heads x (position + 1): each head's probabilities over keys 0..position
};

class LiveCapture : public ChunkObserver {
public:
    explicit LiveCapture(const ReadoutDecl& decl);
    ~LiveCapture() override;
    LiveCapture(const LiveCapture&) = delete;
    LiveCapture& operator=(const LiveCapture&) = delete;

    // Captures from the next forward on.
    void set(const Capture& capture);
    // Stops capturing and drops what was not taken (a generation's end), keeping the attention
    // texture for the next capture.
    void end();
    const Capture& capture() const { return capture_; }
    // The positions captured before `end`, in order; they are handed out once. A forward from
    // position p drops what was captured at p and later (those positions run again).
    std::vector<CapturedPosition> take(int end);
    // Bytes of the texture of captured attention, while attention is captured.
    std::int64_t gpuBytes() const { return probs_ ? probs_->bytes() : 0; }

    void startRun(int pos0, int end) override;
    void afterLayer(int layer, int pos0, int count) override;
    void afterChunk(int pos0, int count) override;

private:
    // A chunk's capture on its way back: its positions and the reads of what it captured.
    struct Read {
        int pos0 = 0, count = 0, lensFirst = 0, lensCount = 0;
        AsyncRead attention, lens;
    };
    static constexpr int kReads = 4;
    // The chunk's positions that get the lens: [first, first + count).
    struct LensRange {
        int first, count;
    };
    LensRange lensRange(int pos0, int count) const;
    // Takes the oldest read in flight into captured_ (waiting natively if need be).
    void finishRead();
    // Drops the reads in flight of positions from `pos0` on (finishing one that straddles it).
    void dropReadsFrom(int pos0);

    ForwardView& model_;
    Lens lens_;
    Capture capture_;
    std::map<int, CapturedPosition> captured_;
    Read reads_[kReads];  // oldest first from first_
    int first_ = 0, inFlight_ = 0;
    int lensFrom_ = 0;                // the first position of the forward under way with a lens
    std::unique_ptr<Texture> probs_;  // [chunk * heads, context], while attention is captured
    std::unique_ptr<AttentionProbsOp> probsOp_;
};

}  // namespace gpt2
