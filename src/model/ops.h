#pragma once
// The transformer ops as small pass declarations (shader + defines + inputs). The model chains them;
// the op tests run each one alone against the CPU reference.
#include <optional>
#include <vector>

#include "format/model_config.h"
#include "gl/pass.h"

namespace gpt2 {

// x[p] = wte[ids[p]] + wpe[p]. `ids` holds one token id per row in .x.
Pass embeddingPass(ProgramCache& programs, Texture& out, const Texture& ids, const Texture& wte, const Texture& wpe);

// Output row r of a matmulPass reads input row r + offset.
void setInputRowOffset(Pass& pass, int offset);

// A LayerNorm that a matmul applies to its input (MatmulSpec::inputLayerNorm): x's row moments from
// LayerNormOp::runMoments, gamma and beta.
struct InputLayerNorm {
    const Texture* moments = nullptr;
    const Texture* gamma = nullptr;
    const Texture* beta = nullptr;
    int cols = 0;
    float eps = 0;
};

// LayerNorm over the first `cols` columns: out row r = LN(x row r + inputRowOffset) * gamma + beta.
// With `moments` (one texel per row, rows as x's and of whole lines, float blending) and
// splitTexels > 0, two passes: each row's moments summed once in blended instances of splitTexels
// input texels (shaders/layer_norm_moments.frag), then the normalisation (GPUs: 5.5 + 5.5 us a
// LayerNorm on an H200 where one pass took 17-18). A one-row matmul can then normalise its input
// itself from the moments (InputLayerNorm) and the normalisation pass is skipped (runMoments).
// Otherwise one pass whose fragments each compute their row's statistics (software renderers,
// where the fetches are cheap and every pass costs a full sweep of the CPU, and GPUs without float
// blending).
class LayerNormOp {
public:
    LayerNormOp(ProgramCache& programs, Texture& out, const Texture& x, const Texture& gamma, const Texture& beta,
                int cols, float eps, Texture* moments = nullptr, int splitTexels = 0);
    // Output rows [rowBegin, rowEnd), from input rows [rowBegin, rowEnd) + inputRowOffset.
    void run(int rowBegin, int rowEnd, int inputRowOffset);
    // Only the moments of x rows [rowBegin, rowEnd) (hasMoments()), for a matmul's InputLayerNorm.
    void runMoments(int rowBegin, int rowEnd);
    bool hasMoments() const { return moments_.has_value(); }
    // What a matmul needs to normalise x's rows itself after runMoments (hasMoments()).
    const Texture& input() const { return x_; }
    const InputLayerNorm& inputLayerNorm() const { return folded_; }

private:
    const Texture& x_;
    InputLayerNorm folded_;
    std::optional<Pass> moments_;
    Pass normalize_;
};

enum class Epilogue { None, GeluTanh, GeluErf, Relu };
Epilogue activationEpilogue(Activation activation);

struct MatmulSpec {
    const Texture* x = nullptr;
    const Texture* weight = nullptr;        // [K, N] (or [N, K] with transposedWeight), rows padded to x's texels
    const Texture* bias = nullptr;          // [1, N]
    const Texture* residual = nullptr;      // added last, rows as the output
    Epilogue activation = Epilogue::None;       // of the output (not with splitTexels)
    Epilogue inputActivation = Epilogue::None;  // of x, on fetch (the MLP projection after a split c_fc)
    bool transposedWeight = false;
    // One output row per run, split: the vertex shader of each split-K instance fetches its input
    // texels (applying inputLayerNorm or inputActivation) for all its fragments (matmul_row.vert).
    bool inputFromVertex = false;
    // Instead of inputActivation. (In the fragment shader, without inputFromVertex, it costs two more
    // fetches per input texel and output texel: slower than a normalisation pass on an H200.)
    std::optional<InputLayerNorm> inputLayerNorm = std::nullopt;
    int inRowOffset = 0;                    // output row r reads x row r + inRowOffset (setInputRowOffset)
    // > 0: split-K, one blended instance per splitInstanceTexels(input texels, splitTexels) input
    // texels (Pass instances); 0: one loop.
    int splitTexels = 0;
};

// The input texels per split-K instance: the largest divisor of `texels` up to `splitTexels`, so that
// every instance runs the same constant number of iterations (which the compiler unrolls).
int splitInstanceTexels(int texels, int splitTexels);

// Whether a matmulPass of `spec` can take its input from the vertex shader (inputFromVertex): split-K,
// with the input texels of an instance and the instance within the 15 varying vectors that every
// OpenGL ES 3.0 / WebGL2 GPU has, i.e. at most 14 texels per instance (the default split is 8).
bool canTakeInputFromVertex(const MatmulSpec& spec);

// One output, or three (the fused Q/K/V projection): output p takes weight columns
// [p * partCols, (p + 1) * partCols), partCols being the outputs' column count.
// Split-K needs output rows of whole lines and no output activation. A pass with inputFromVertex
// must be run for one row at a time (runs of more rows fail).
Pass matmulPass(ProgramCache& programs, std::vector<Texture*> outputs, const MatmulSpec& spec);

struct AttentionShape {
    int heads = 1;
    int headTexels = 1;  // ceil(head_dim / 4): each head is padded to whole texels
};

// scores[(q - pos0) * heads + h, key] for queries from u_pos0 (set per run with setAttentionPosition).
Pass attentionScoresPass(ProgramCache& programs, Texture& scores, const Texture& q, const Texture& kCache,
                         const AttentionShape& shape, float scale);
// out[q] = softmax(scores) . V over keys 0..q, for queries from u_pos0.
Pass attentionApplyPass(ProgramCache& programs, Texture& out, const Texture& scores, const Texture& vCache,
                        const AttentionShape& shape);
// Probabilities of the scores rows, zero for masked keys (for readback).
Pass attentionProbsPass(ProgramCache& programs, Texture& out, const Texture& scores, const AttentionShape& shape);

void setAttentionPosition(Pass& pass, int pos0);

// Top-k on the GPU, one candidate per round (shaders/topk.glsl): the block pass finds each block's
// best logit after candidate `rank - 1`, the select pass writes the best of those as candidate `rank`.
// `blocks` has one row of ceil(logit texels / blockTexels) texels; `candidates` one row per rank.
Pass topkBlockPass(ProgramCache& programs, Texture& blocks, const Texture& logits, const Texture& candidates, int vocab,
                   int blockTexels);
Pass topkSelectPass(ProgramCache& programs, Texture& candidates, const Texture& blocks);
// Writes the best candidate's id as the token of the rows it runs (shaders/top_candidate_token.frag).
Pass topCandidateTokenPass(ProgramCache& programs, Texture& ids, const Texture& candidates);

}  // namespace gpt2
