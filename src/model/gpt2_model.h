#pragma once
// GPT-2 as a graph of ops over named textures (gpt2_model.cpp, picoGPT's forward), run on this GPU
// as the tuning decides (tuning.h, linear.h). Every texture and pass is made once at load time; a
// forward run only uploads token ids and draws. Activations live at absolute positions: row p of the
// residual stream, Q, K/V caches, ... belongs to token position p, so prefill (many rows) and decode
// (one row) are the same passes over different row ranges.
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gl/capabilities.h"
#include "gl/pass.h"
#include "model/activations.h"
#include "model/linear.h"
#include "model/model_weights.h"
#include "model/ops.h"
#include "model/read_queue.h"
#include "model/tuning.h"

namespace gpt2 {

class Gpt2Model {
public:
    // Declares every texture and pass, then allocates the textures (refused above
    // options.maxGpuBytes); weights arrive through weights().
    Gpt2Model(const ModelConfig& config, const ModelOptions& options);
    // The bytes of the textures such a model would take on the current context (its limits and
    // tuning), declared but neither allocated nor compiled: what a page shows before choosing a model.
    static std::int64_t plannedGpuBytes(const ModelConfig& config, const ModelOptions& options);
    ~Gpt2Model();

    ModelWeights& weights() { return weights_; }
    // The shader programs were only issued for compiling and linking by the constructor:
    // programsLinked() polls the driver (KHR_parallel_shader_compile; always true without it),
    // finishPrograms() checks them all, waiting if need be, so a bad shader fails the load.
    bool programsLinked() const { return programs_.linked(tuning_.caps.parallelShaderCompile); }
    void finishPrograms() { programs_.finish(); }

    const ModelConfig& config() const { return config_; }
    const GlCapabilities& capabilities() const { return tuning_.caps; }

    // Runs tokens `ids` at positions [pos0, pos0 + ids.size()). Cache rows < pos0 must hold the
    // earlier tokens of the same sequence.
    void forward(const std::vector<int>& ids, int pos0);
    // The same a chunk at a time, for callers that must stay responsive: beginForward checks and
    // uploads the ids; each runChunk() issues the next chunk of at most prefillChunk tokens and
    // returns true once the last one (with the last position's logits) is issued. chunkDone() says
    // whether fewer than Tuning::chunksInFlight of the chunks issued are unfinished, so a caller that
    // waits for it keeps at most that many queued.
    void beginForward(const std::vector<int>& ids, int pos0);
    bool runChunk();
    bool chunkDone() const;
    // Runs position `pos` with the token the last requestToken chose (or the best of the last
    // requestCandidates) as its token, without reading it back first: decoding keeps the GPU busy
    // while the readback travels.
    void forwardChosenToken(int pos);

    // Logits of the last position forwarded: vocab_size floats.
    std::vector<float> logits();
    // The k largest of those logits, best first (ties: smaller id first), found on the GPU: reads
    // back k texels instead of the whole vocabulary. 1 <= k <= kMaxCandidates.
    static constexpr int kMaxCandidates = kMaxTopk;
    struct Candidate {
        int id;
        float logit;
    };
    std::vector<Candidate> topCandidates(int k);
    // The reads of the next token without waiting for the GPU: request...() runs the passes and
    // starts the read, readReady() polls the oldest read, take...() returns its result (waiting
    // natively if it is not ready). Up to kMaxReads reads may be in flight, taken in the order they
    // were started; beginForward (a new sequence, or a step with a known token) drops those never
    // taken.
    static constexpr int kMaxReads = ReadQueue::kMaxReads;
    void requestLogits();
    void requestCandidates(int k);
    // Draw number `draw` of `sampling` (ops/sampler.h) for the next position, the sequence so far
    // being the tokens the repetition penalty sees; takeToken() gives its id, or -1 where top-p alone
    // needs more candidates than the GPU lists (then read the logits).
    void requestToken(const TokenSampling& sampling, int draw);
    bool readReady() const { return reads_.ready(); }
    std::vector<float> takeLogits();
    std::vector<Candidate> takeCandidates();
    int takeToken();
    // Bytes read back from the GPU so far (every read: logits, candidates and the readouts).
    std::int64_t readbackBytes() const { return readbackBytes_; }
    // Attention probabilities of `layer` for the sequence `ids` (positions 0..T-1), heads x T x T.
    // Recomputes layers 0..layer; the cache rows it rewrites get the same values.
    std::vector<float> attention(const std::vector<int>& ids, int layer);
    // log p(ids[t + 1] | ids[0..t]) for t < T - 1 (perplexity): runs `ids` from position 0, replacing
    // the cache rows of whatever sequence was there, and scores each position's next token on the GPU,
    // reading back one float per position. Blocks on each read (the CLI's and tests' use).
    std::vector<float> tokenLogProbs(const std::vector<int>& ids);
    // The residual stream after block `layer` for `ids` from position 0: T x n_embd floats. Runs
    // blocks 0..layer only, so the cache no longer holds a whole sequence.
    std::vector<float> hiddenStates(const std::vector<int>& ids, int layer);
    // The logit lens: for each block l and position t, the k most likely next tokens of
    // softmax(lm_head(ln_f(the residual stream after block l))), best first. The GPU finds them; only
    // their ids, logits and each position's log-sum-exp are read back. The last block's is the
    // model's own distribution. Runs `ids` from position 0 as a new sequence, ending as forward()
    // does (the last position's logits ready). Result: [layer][position]. k = 0: kDefaultLensTopK.
    static constexpr int kDefaultLensTopK = 5;
    struct LensCell {
        std::vector<int> ids;
        std::vector<float> probs;
    };
    std::vector<std::vector<LensCell>> lens(const std::vector<int>& ids, int k);

    // Live views: what every forward captures from now on at each position it runs, block by block,
    // without running anything twice: the logit lens (lensTopK > 0) and the attention probabilities
    // of one layer (attentionLayer >= 0). Each chunk of a capturing forward ends with one readback.
    // The lens covers the last lensPositions positions of each forward (0: all of them; a decode
    // step's one position is always covered).
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
    void setCapture(const Capture& capture);
    // Stops capturing and drops what was not taken (a generation's end), keeping the attention
    // texture for the next capture.
    void endCapture();
    const Capture& capture() const { return capture_; }
    // The positions captured before `end`, in order; they are handed out once. A forward from
    // position p drops what was captured at p and later (those positions run again).
    std::vector<CapturedPosition> takeCaptured(int end);

    // Bytes of every texture this model owns: the weights and every declared activation.
    std::int64_t gpuBytes() const {
        return weights_.bytes() + activations_.bytes() + (captureProbs_ ? captureProbs_->bytes() : 0);
    }

private:
    struct Block;  // the ops of one transformer block, declared with the graph (gpt2_model.cpp)
    // Declares the textures and passes and allocates none of the textures; with Planning programs it
    // compiles nothing either (plannedGpuBytes).
    Gpt2Model(const ModelConfig& config, const ModelOptions& options, ProgramCache::Mode programs);
    void declareGraph();
    void checkPositions(std::size_t count, int pos0);
    void uploadIds(const std::vector<int>& ids, int pos0);
    // Positions [pos0, end) are next to run, chunk by chunk; what was captured from pos0 on is dropped.
    void startChunks(int pos0, int end);
    // Block `layer` (the forward, and the readouts of gpt2_readouts.cpp), the first `blocks` blocks,
    // or one layer's Q/K/V and scores.
    void runLayer(int layer, int pos0, int count);
    void runBlocks(int blocks, int pos0, int count);
    void runAttentionScores(int layer, int pos0, int count);
    // Readouts run their own sequence of `count` ids (uploaded from position 0) a chunk at a time:
    // each chunk through the first `blocks` blocks, then `after(start, n)`.
    void runChunks(int count, int blocks, const std::function<void(int start, int n)>& after);
    // Live views: after block `layer`, the lens of its output rows [pos0, pos0 + count) (and that
    // layer's attention) as capture_ asks, into textures that readCaptured reads once the chunk ran.
    bool capturing() const { return capture_.lensTopK > 0 || capture_.attentionLayer >= 0; }
    // Positions [lensFirst, lensFirst + lensCount) of the chunk get the lens.
    void captureLayer(int layer, int pos0, int count, int lensFirst, int lensCount);
    // Once a capturing chunk of `count` positions has run: the lens of every (layer, position) it
    // covers, then one read of each capture, in flight until takeCaptured (or a later capture) needs it.
    void scoreLens(int lensCount);
    void readCaptured(int pos0, int count, int lensFirst, int lensCount);
    // Takes the oldest capture read in flight into captured_ (waiting natively if need be).
    void finishCaptureRead();
    // Drops the capture reads in flight of positions from `pos0` on (finishing one that straddles it).
    void dropCaptureReadsFrom(int pos0);
    // Lens residual rows scored per run of the head: a decode step's layers together (each weight
    // fetch serves them all), no more than its LayerNorm's chunk.
    int lensBatchRows() const;
    // Positions from `pos0` on are about to be rewritten: the repetition penalty's tokens forget them.
    void rewritingFrom(int pos0);

    ModelConfig config_;
    Tuning tuning_;
    ProgramCache programs_;
    ModelWeights weights_;
    Activations activations_;
    Texture *ids_ = nullptr, *residual_ = nullptr, *logits_ = nullptr, *candidates_ = nullptr, *chosen_ = nullptr,
            *logProbs_ = nullptr, *logSumExp_ = nullptr, *lensCandidates_ = nullptr;
    AttentionShape shape_;
    AttentionScratch attentionScratch_;
    std::unique_ptr<Pass> embed_, candidateToken_, chosenToken_;
    Pass* lastTokenPass_ = nullptr;  // of the last token requested: where its id is
    std::vector<Block> blocks_;
    std::unique_ptr<Linear> lmHead_;
    static constexpr int kScoreRows = 8;            // rows scored per lm_head run (tokenLogProbs)
    std::unique_ptr<Linear> scoreHead_, lensHead_;  // over kScoreRows rows, over lensBatchRows()
    // Rows of the top-k searches' block lists: a search of up to kMaxTopk candidates, or as many
    // lens rows as fit at the lens's k.
    static constexpr int kTopkBlockRows = 2 * kMaxTopk;
    // Ranks a first-level top-k fragment writes: as many render targets as a draw may write, in a
    // power of two up to 8 (rows interleave over it, and kTopkBlockRows is a multiple).
    int topkRanksPerFragment() const;
    std::unique_ptr<Pass> lensCopy_;
    std::unique_ptr<Pass> tokenLogProb_;
    std::unique_ptr<SamplerOp> sampler_;
    std::unique_ptr<TopkOp> lensTopk_;
    int seenThrough_ = -1;  // positions [0, seenThrough_] are marked for the repetition penalty
    std::unique_ptr<LogSumExpOp> scoredLse_;
    Capture capture_;
    std::map<int, CapturedPosition> captured_;
    // A chunk's capture on its way back: its positions and the reads of what it captured. A ring of
    // kCaptureReads, oldest first: a step's capture travels while the next step runs.
    struct CaptureRead {
        int pos0 = 0, count = 0, lensFirst = 0, lensCount = 0;
        AsyncRead attention, lens;
    };
    static constexpr int kCaptureReads = 4;
    CaptureRead captureReads_[kCaptureReads];
    int captureFirst_ = 0, captureInFlight_ = 0;
    std::unique_ptr<Texture> captureProbs_;  // [chunk * heads, context], while attention is captured
    std::unique_ptr<AttentionProbsOp> captureProbsOp_;
    ReadQueue reads_;
    std::int64_t readbackBytes_ = 0;
    std::deque<GlFence> chunkFences_;   // of the last chunks issued (at most chunksInFlight), oldest first
    int chunkNext_ = 0, chunkEnd_ = 0;  // positions of the forward that runChunk() continues
    int lensFrom_ = 0;                  // its first position with a lens
    int lastPosition_ = -1;
    bool weightsChecked_ = false;
};

}  // namespace gpt2
