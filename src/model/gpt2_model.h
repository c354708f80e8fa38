#pragma once
// GPT-2 as a graph of ops over named textures (gpt2_model.cpp, picoGPT's forward), run on this GPU
// as the tuning decides (tuning.h, linear.h). Every texture and pass is made once at load time; a
// forward run only uploads token ids and draws. Activations live at absolute positions: row p of the
// residual stream, Q, K/V caches, ... belongs to token position p, so prefill (many rows) and decode
// (one row) are the same passes over different row ranges.
//
// The class runs the forward: the graph and its chunk loop. The next-token choice and the readouts
// (readouts/) are declared with the graph, at the ReadoutSite its constructor
// hands whoever owns the model (Readouts, in the Engine), and see it only as a ForwardView.
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "gl/capabilities.h"
#include "gl/pass.h"
#include "model/activations.h"
#include "model/forward_view.h"
#include "model/interventions.h"
#include "model/linear.h"
#include "model/model_weights.h"
#include "model/ops/attention.h"
#include "model/readback.h"
#include "model/readouts/readout_decl.h"
#include "model/tuning.h"

namespace gpt2 {

// Declares the readouts of a model while the model declares its graph, so that its GPU bytes count
// theirs before anything is allocated.
using DeclareReadouts = std::function<void(const ReadoutSite&)>;

class Gpt2Model final : public ForwardView {
public:
    // Declares every texture and pass, the readouts' through `declareReadouts` (none when empty),
    // then allocates the textures (refused above options.maxGpuBytes); weights arrive through
    // weights(), those named in `blocks` as blocks.
    Gpt2Model(const ModelConfig& config, const ModelOptions& options, const BlockFormats& blocks = {},
              const DeclareReadouts& declareReadouts = {});
    // The bytes of the textures such a model would take on the current context (its limits and
    // tuning), declared but neither allocated nor compiled: what a page shows before choosing a model.
    static std::int64_t plannedGpuBytes(const ModelConfig& config, const ModelOptions& options,
                                        const BlockFormats& blocks, const DeclareReadouts& declareReadouts);
    ~Gpt2Model();

    ModelWeights& weights() { return weights_; }
    // The shader programs were only issued for compiling and linking by the constructor:
    // programsLinked() polls the driver (KHR_parallel_shader_compile; always true without it),
    // finishPrograms() checks them all, waiting if need be, so a bad shader fails the load.
    bool programsLinked() const { return programs_.linked(tuning_.caps.parallelShaderCompile); }
    void finishPrograms() { programs_.finish(); }
    // Every program made for the model and its readouts (tools read what the driver made of them).
    const ProgramCache& programCache() const { return programs_; }

    const ModelConfig& config() const override { return config_; }
    const Tuning& tuning() const override { return tuning_; }
    const GlCapabilities& capabilities() const { return tuning_.caps; }

    // Runs tokens `ids` at positions [pos0, pos0 + ids.size()). Cache rows < pos0 must hold the
    // earlier tokens of the same sequence.
    void forward(const std::vector<int>& ids, int pos0) override;
    // The same a chunk at a time, for callers that must stay responsive: beginForward checks and
    // uploads the ids; each runChunk() issues the next chunk of at most prefillChunk tokens and
    // returns true once the last one (with the last position's logits) is issued. chunkDone() says
    // whether fewer than Tuning::chunksInFlight of the chunks issued are unfinished, so a caller that
    // waits for it keeps at most that many queued.
    void beginForward(const std::vector<int>& ids, int pos0);
    bool runChunk();
    bool chunkDone() const;
    // Runs position `pos` over the token id already written into its ids row on the GPU
    // (NextToken::writeChosenId), without reading it back first: decoding keeps the GPU busy while
    // the readback travels.
    void forwardWrittenToken(int pos);
    // The position whose logits the logits texture holds; -1 when none does.
    int lastPosition() const override { return lastPosition_; }
    // What every forward from now on does inside the blocks (model/interventions.h): masks and the
    // steering vector uploaded where they change, patched rows uploaded as their block runs.
    void setInterventions(const InterventionPlan& plan);

    // Bytes read back from the GPU so far: every read, the next tokens' and the readouts'.
    std::int64_t readbackBytes() const { return readback_.bytes(); }
    // Bytes of every texture this model owns: the weights and every declared activation (the
    // readouts' included).
    std::int64_t gpuBytes() const;

private:
    struct Block;  // the ops of one transformer block, declared with the graph (gpt2_model.cpp)
    // Declares the textures and passes and allocates none of the textures; with Planning programs it
    // compiles nothing either (plannedGpuBytes).
    Gpt2Model(const ModelConfig& config, const ModelOptions& options, ProgramCache::Mode programs,
              const BlockFormats& blocks, const DeclareReadouts& declareReadouts);
    void declareGraph(const DeclareReadouts& declareReadouts);

    // What the readouts use of the forward (ForwardView).
    ProgramCache& programs() override { return programs_; }
    Readback& readback() override { return readback_; }
    Texture& residual() override { return *residual_; }
    const AttentionScratch& attentionScratch() const override { return attentionScratch_; }
    const AttentionShape& attentionShape() const override { return shape_; }
    void runSequence(const std::vector<int>& ids, int blocks,
                     const std::function<void(int start, int n)>& after) override;
    void endSequence() override;
    void runAttentionScores(int layer, int pos0, int count) override;
    void observeChunks(ChunkObserver* observer) override { observer_ = observer; }
    void listen(SequenceListener* listener) override { listener_ = listener; }

    void checkPositions(std::size_t count, int pos0);
    void uploadIds(const std::vector<int>& ids, int pos0);
    // Positions [pos0, end) are next to run, chunk by chunk.
    void startChunks(int pos0, int end);
    void runLayer(int layer, int pos0, int count);
    // The chunk loop's body, for forwards and readouts alike: the embedding and the first `blocks`
    // blocks over positions [pos0, pos0 + count), the observer told after each block when `observed`.
    void runBlocks(int pos0, int count, int blocks, bool observed);
    // Uploads the masks and steering vectors of `plan` for the blocks where they differ from the
    // current plan's (`all`: every block, as after allocation).
    void applyInterventions(const InterventionPlan& plan, bool all);

    ModelConfig config_;
    Tuning tuning_;
    ProgramCache programs_;
    ModelWeights weights_;
    Activations activations_;
    Readback readback_;
    Texture *ids_ = nullptr, *residual_ = nullptr;
    AttentionShape shape_;
    AttentionScratch attentionScratch_;
    std::unique_ptr<Pass> embed_;
    std::vector<Block> blocks_;
    std::unique_ptr<Linear> lmHead_;
    ChunkObserver* observer_ = nullptr;
    SequenceListener* listener_ = nullptr;
    std::deque<GlFence> chunkFences_;   // of the last chunks issued (at most chunksInFlight), oldest first
    int chunkNext_ = 0, chunkEnd_ = 0;  // positions of the forward that runChunk() continues
    int lastPosition_ = -1;
    bool weightsChecked_ = false;
    InterventionPlan interventions_;
};

}  // namespace gpt2
