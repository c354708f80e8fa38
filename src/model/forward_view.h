#pragma once
// What the next-token choice and the readouts (readouts/) may use of the model they read: its shape,
// the programs and readback their passes share, the textures they read, and the runs they may start.
// Gpt2Model implements it; they hold this view, never the model, and are owned beside the model by
// whoever owns it (Readouts, in the Engine).
#include <functional>
#include <vector>

#include "format/model_config.h"
#include "gl/program.h"
#include "gl/texture.h"
#include "model/ops/attention.h"
#include "model/readback.h"
#include "model/tuning.h"

namespace gpt2 {

// A readout that runs inside the forward's chunks (live capture): told which positions run next,
// after each block, and once each chunk has run.
class ChunkObserver {
public:
    virtual ~ChunkObserver() = default;
    // Positions [pos0, end) are about to run (again: what was observed of them is stale).
    virtual void startRun(int pos0, int end) = 0;
    virtual void afterLayer(int layer, int pos0, int count) = 0;
    virtual void afterChunk(int pos0, int count) = 0;
};

// What the next token's reads depend on (NextToken): told before the token ids of positions are
// rewritten, and when a run starts whose reads in flight are void.
class SequenceListener {
public:
    virtual ~SequenceListener() = default;
    // Positions from `pos0` on get new token ids.
    virtual void rewritingFrom(int pos0) = 0;
    // A forward of a new sequence, or a readout's own run, starts.
    virtual void runStarting() = 0;
};

class ForwardView {
public:
    virtual const ModelConfig& config() const = 0;
    virtual const Tuning& tuning() const = 0;
    virtual ProgramCache& programs() = 0;
    virtual Readback& readback() = 0;
    // The residual stream, as the block that ran last left it.
    virtual Texture& residual() = 0;
    virtual const AttentionScratch& attentionScratch() const = 0;
    virtual const AttentionShape& attentionShape() const = 0;
    // The position whose logits the logits texture holds; -1 when none does.
    virtual int lastPosition() const = 0;

    // Runs `ids` at positions [pos0, pos0 + ids.size()) as a forward does (the logits of the last).
    virtual void forward(const std::vector<int>& ids, int pos0) = 0;
    // Uploads `ids` as a new sequence from position 0 that the readout runs itself (no forward
    // continues over it), a chunk at a time: each chunk through the first `blocks` blocks, then
    // `after(start, n)`. endSequence(): the logits texture holds no position's logits.
    virtual void runSequence(const std::vector<int>& ids, int blocks,
                             const std::function<void(int start, int n)>& after) = 0;
    virtual void endSequence() = 0;
    // Layer `layer`'s Q/K/V and attention scores of positions [pos0, pos0 + count), left in the
    // attention scratch.
    virtual void runAttentionScores(int layer, int pos0, int count) = 0;
    // The observer of every chunk from now on (null: none).
    virtual void observeChunks(ChunkObserver* observer) = 0;
    // The listener of the sequence's runs (null: none).
    virtual void listen(SequenceListener* listener) = 0;

protected:
    ~ForwardView() = default;
};

}  // namespace gpt2
