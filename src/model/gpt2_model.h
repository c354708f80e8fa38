#pragma once
// GPT-2 as a fixed list of passes over textures. Every texture and pass is made once at load time;
// a forward run only uploads token ids and draws. Activations live at absolute positions: row p of
// the residual stream, Q, K/V caches, ... belongs to token position p, so prefill (many rows) and
// decode (one row) are the same passes over different row ranges.
//
//   x      = wte[ids] + wpe[pos]                                   [T, C]
//   per layer:
//     q,k,v  = LN1(x) @ Wqkv + b    (k, v written into the cache)  [T, 3C]
//     s      = q k^T * scale, causal                               [T*H, pos]
//     a      = softmax(s) v                                        [T, C]
//     x'     = x + a @ Wo + bo                                     [T, C]
//     h      = gelu(LN2(x') @ Wfc + bfc)                           [T, 4C]
//     x      = x' + h @ Wproj + bproj                              [T, C]
//   logits = LN_f(x[last]) @ wte^T                                 [1, V]
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gl/async_read.h"
#include "gl/capabilities.h"
#include "model/model_weights.h"
#include "model/ops.h"
#include "option_defaults.h"

namespace gpt2 {

// "fp16" or "fp32" (options.json's names) as a texture format; throws on any other name.
TexelFormat weightFormatNamed(const std::string& name);

// The load options of options.json (defaults from there), and the knobs tests use to force layouts.
struct ModelOptions {
    TexelFormat weights = weightFormatNamed(defaults::weights);  // Float16: stored as decided by halfPairs
    int maxTextureSize = defaults::maxTextureSize;  // > 0: pretend the GPU allows no larger textures (tests fold with it)
    // Prompts run in chunks of at most this many tokens; the attention scores texture holds one chunk
    // (heads x chunk x context), which keeps activation memory small next to the KV cache.
    int prefillChunk = 32;
    // Texels per line of activation textures: -1 picks lines of up to 32 texels that hold whole
    // rows (activationLineWidth()), 0 keeps rows unfolded; tests force either.
    int activationLineWidth = -1;
    // Split-K: each matmul whose output rows are whole lines sums its inputs in blended instances of
    // this many input texels, so a one-row decode matmul has enough fragments for a big GPU.
    // -1 picks kGpuSplitTexels on GPUs with EXT_float_blend and 0 (one loop) on software renderers,
    // where more fragments only add work; tests force either. Split matmuls also get a one-row pass
    // for decode steps (Matmul below).
    int splitTexels = -1;
    // Matrices taller than a texture page one row per line over power-of-two pages
    // (TextureLimits::pagedRows): -1 on software renderers only, 0 never, 1 always; tests force either.
    int pagedRows = -1;
    // fp16 weights as row pairs in RGBA32UI (TexelFormat::HalfPairs: half the fetches of RGBA16F for
    // the same bytes): -1 auto (all renderers but llvmpipe, see weightFormat), 0 RGBA16F, 1 row pairs.
    int halfPairs = -1;
};

class Gpt2Model {
public:
    // Allocates every texture and declares every pass; weights arrive through weights().
    Gpt2Model(const ModelConfig& config, const ModelOptions& options);

    ModelWeights& weights() { return weights_; }
    // The shader programs were only issued for compiling and linking by the constructor:
    // programsLinked() polls the driver (KHR_parallel_shader_compile; always true without it),
    // finishPrograms() checks them all, waiting if need be, so a bad shader fails the load.
    bool programsLinked() const { return programs_.linked(caps_.parallelShaderCompile); }
    void finishPrograms() { programs_.finish(); }

    const ModelConfig& config() const { return config_; }
    const GlCapabilities& capabilities() const { return caps_; }

    // Runs tokens `ids` at positions [pos0, pos0 + ids.size()). Cache rows < pos0 must hold the
    // earlier tokens of the same sequence.
    void forward(const std::vector<int>& ids, int pos0);
    // The same a chunk at a time, for callers that must stay responsive: beginForward checks and
    // uploads the ids; each runChunk() issues the next chunk of at most prefillChunk tokens and
    // returns true once the last one (with the last position's logits) is issued. chunkDone() says
    // whether the GPU has finished the chunk issued last, so a caller keeps at most one queued.
    void beginForward(const std::vector<int>& ids, int pos0);
    bool runChunk();
    bool chunkDone() const { return chunkFence_.signaled(); }
    // Runs position `pos` with the best candidate of the last top-k search as its token, without
    // reading it back first: greedy decode keeps the GPU busy while the readback travels.
    void forwardTopCandidate(int pos);

    // Logits of the last position forwarded: vocab_size floats.
    std::vector<float> logits();
    // The k largest of those logits, best first (ties: smaller id first), found on the GPU: reads
    // back k texels instead of the whole vocabulary. 1 <= k <= kMaxCandidates.
    static constexpr int kMaxCandidates = 64;
    struct Candidate {
        int id;
        float logit;
    };
    std::vector<Candidate> topCandidates(int k);
    // The same two reads without waiting for the GPU: request...() runs the passes and starts the
    // read, readReady() polls the oldest read, take...() returns its result (waiting natively if it
    // is not ready). Up to kMaxReads reads may be in flight, taken in the order they were started;
    // beginForward (a new sequence, or a step with a known token) drops those never taken.
    static constexpr int kMaxReads = 2;
    void requestLogits();
    void requestCandidates(int k);
    bool readReady() const;
    std::vector<float> takeLogits();
    std::vector<Candidate> takeCandidates();
    // Bytes read back from the GPU so far (logits, candidates, attention).
    std::int64_t readbackBytes() const { return readbackBytes_; }
    // Attention probabilities of `layer` for the sequence `ids` (positions 0..T-1), heads x T x T.
    // Recomputes layers 0..layer; the cache rows it rewrites get the same values.
    std::vector<float> attention(const std::vector<int>& ids, int layer);

    // Bytes of every texture this model owns (weights, KV cache, activations).
    std::int64_t gpuBytes() const;

private:
    // The most texels per line of an activation texture (TensorLayout::make): a decode row of a
    // 768-wide model then covers 32 x 6 fragments instead of one 192-texel line. Rasterisers shade
    // 2 x 2 quads, so a one-line draw runs half its lanes as helpers: folded rows halved
    // SwiftShader's decode and took an H200 from 3.9 to 2.9 ms (124M; docs/benchmarks.md).
    static constexpr int kActivationLineWidth = 32;
    // Input texels per split-K instance on GPUs (ModelOptions::splitTexels).
    static constexpr int kGpuSplitTexels = 8;
    // A matmul declared for runs of any rows (prefill chunks) and, where it is split (GPUs), for one
    // row (decode steps): its input from the vertex shader, with the LayerNorm before it folded in
    // when that has a moments pass. A run of one row takes `row` where there is one.
    struct Matmul {
        std::optional<Pass> rows, row;
    };
    struct Layer {
        LayerNormOp ln1, ln2;
        std::unique_ptr<Texture> kCache, vCache;
        Matmul qkv, proj, fc, mlpProj;
        Pass scores, apply;
    };
    void checkPositions(std::size_t count, int pos0);
    // `manyRows` false: only ever run for one row (lm_head), so `rows` is declared only if `row` is not.
    Matmul matmul(std::vector<Texture*> outputs, const MatmulSpec& spec, const LayerNormOp* layerNorm, bool manyRows = true);
    void runLayer(Layer& layer, int pos0, int count);
    void runScores(Layer& layer, int pos0, int count);
    // The pass of `m` that runs `count` rows. Matmuls without a LayerNorm before them read their own
    // rows (input row offset 0, set when declared).
    Pass& passFor(Matmul& m, int count);
    // Output rows [outRow, outRow + count) of `m` from `layerNorm` of input rows [inRow, inRow + count).
    void runNormalized(LayerNormOp& layerNorm, Matmul& m, int outRow, int inRow, int count);
    std::unique_ptr<Texture> activation(int rows, int cols, const char* name);
    // Texels per line for an activation of `texels` per row: kActivationLineWidth or the largest
    // power of two below it that divides the row (whole lines per row, which split-K needs), at
    // least 8; else whole rows per line on GPUs and lines of kActivationLineWidth on software
    // renderers (which do not split). One row: always kActivationLineWidth.
    int activationLineWidth(int rows, int texels) const;

    ModelConfig config_;
    GlCapabilities caps_;
    ProgramCache programs_;
    ModelWeights weights_;
    AttentionShape shape_;
    std::unique_ptr<Texture> ids_, x_[2], normed_, moments_, q_, scores_, attended_, hidden_, logits_, topkBlocks_, candidates_;
    std::vector<Layer> layers_;
    std::optional<LayerNormOp> finalNorm_;
    Matmul lmHead_;
    enum HeadPass { kEmbedding, kTopkBlock, kTopkSelect, kTopCandidateToken };
    std::vector<Pass> head_;  // the other passes outside the layers, indexed by HeadPass
    std::int64_t readbackBytes_ = 0;
    enum class Reading { Logits, Candidates };
    struct PendingRead {
        AsyncRead read;
        Reading what = Reading::Logits;
        int count = 0;  // candidates
    };
    PendingRead& startRead(Reading what, int count);
    std::vector<float> finishRead(Reading what, const char* caller);
    PendingRead reads_[kMaxReads];
    int firstRead_ = 0, readsInFlight_ = 0;
    GlFence chunkFence_;
    int chunkNext_ = 0, chunkEnd_ = 0;  // positions of the forward that runChunk() continues
    int prefillChunk_;
    int forcedLineWidth_;  // ModelOptions::activationLineWidth
    int splitTexels_;
    int lastPosition_ = -1;
    bool weightsChecked_ = false;
};

}  // namespace gpt2
