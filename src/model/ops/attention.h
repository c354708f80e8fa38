#pragma once
// Causal self-attention over a KV cache. A decode step's one query: its scores
// (shaders/attention_scores.frag), then softmax(scores) . V in one pass (shaders/attention_apply.frag)
// or over blocks of keys (flash-decoding). A run of several queries (a prompt chunk): the scores of
// ROWS queries per fragment, each row's largest score (shaders/attention_row_max.frag), then
// softmax . V for ROWS queries per fragment. And the probabilities for readback
// (shaders/attention_probs.frag).
#include <optional>

#include "gl/pass.h"

namespace gpt2 {

struct AttentionShape {
    int heads = 1;
    int headTexels = 1;  // ceil(head_dim / 4): each head is padded to whole texels
};

// Scores rows per head of a run of `count` queries whose passes compute `rows` queries per fragment:
// score row = head * stride + query - pos0 (shaders/attention.glsl).
int attentionStride(int count, int rows);

// The passes, for tests and the op. Each writes `rows` rows per fragment (Pass::writeRowGroups).
// scores[head * stride + q - pos0, key] for the run set by setAttentionRun. `q` holds the queries at
// their positions, or (fp16 row pairs, `rows` at least 2) the run's from pos0 on, as
// runQueriesPass writes them.
Pass attentionScoresPass(ProgramCache& programs, Texture& scores, const Texture& q, const Texture& kCache,
                         const AttentionShape& shape, float scale, int rows = 1);
// runQueries[r] = q[pos0 + r] for the run's queries, as fp16 row pairs (set u_in_row_offset to pos0).
Pass runQueriesPass(ProgramCache& programs, Texture& runQueries, const Texture& q);
// rowMax[r] = the largest unmasked score of scores row r.
Pass attentionRowMaxPass(ProgramCache& programs, Texture& rowMax, const Texture& scores, const AttentionShape& shape);
// out[q] = softmax(scores) . V over keys 0..q, for the run's queries; runs cover whole groups of
// `rows` positions, and a group's positions outside the run get scratch. `rowMax`: each scores row's
// largest score (attentionRowMaxPass), else each fragment finds it. `outputMask`: as AttentionOp's.
Pass attentionApplyPass(ProgramCache& programs, Texture& out, const Texture& scores, const Texture& vCache,
                        const AttentionShape& shape, int rows = 1, const Texture* rowMax = nullptr,
                        const Texture* outputMask = nullptr);
// Probabilities of the run's scores, zero for masked keys, into rows (q - pos0) * heads + h (for readback).
Pass attentionProbsPass(ProgramCache& programs, Texture& out, const Texture& scores, const AttentionShape& shape);

// The run of queries [pos0, pos0 + count) and its stride (attentionStride).
void setAttentionRun(Pass& pass, int pos0, int count, int stride);

// Decode attention split over blocks of keys (flash-decoding; shaders/attention_partial.frag, then
// shaders/attention_merge.frag), for a decode step whose context has more than blockKeys keys.
struct KeyBlocks {
    int blockKeys = 0;  // a multiple of 4
    // Both [heads * ceil(positions / blockKeys), head texels * 4], rows (head, block): each block's
    // weighted sum of V, and its (largest score, sum of exp(score - largest)).
    Texture* partial = nullptr;
    Texture* stats = nullptr;
};

// What the layers' attention works in, shared by them all.
struct AttentionScratch {
    Texture* stepScores = nullptr;  // [heads, keys]: a decode step's
    // A run of several queries: [heads * attentionStride(chunk, rows), keys], rows interleaved over
    // groups of `rows` pages, and each row's largest score ([same rows, 1]).
    Texture* runScores = nullptr;
    Texture* runRowMax = nullptr;
    // A run's queries as fp16 row pairs ([chunk, head texels * 4]) for its scores pass, or null: it
    // reads the queries texture (Tuning::halfPromptInputs).
    Texture* runQueries = nullptr;
    int rows = 1;  // queries per fragment of a run's passes
    KeyBlocks keyBlocks;
};

// One layer's attention: a = softmax(q k^T * scale, causal) v for queries [pos0, pos0 + count).
class AttentionOp {
public:
    // `outputMask`: [1, Cq] of 1 or 0, the output's columns kept or zeroed (a caller's head
    // ablations, model/interventions.h); null: none.
    AttentionOp(ProgramCache& programs, Texture& out, const Texture& q, const Texture& kCache, const Texture& vCache,
                const AttentionShape& shape, float scale, const AttentionScratch& scratch,
                const Texture* outputMask = nullptr);
    void run(int pos0, int count);
    // The scores alone, for attention readback (AttentionProbsOp).
    void runScores(int pos0, int count);

private:
    int heads_, rows_;
    Pass stepScores_, stepApply_, runScores_, runRowMax_, runApply_;
    int blockKeys_ = 0;  // 0: never split
    std::optional<Pass> partial_, merge_;
    std::optional<Pass> runQueries_;  // where the run's scores read fp16 row pairs
};

// The probabilities of the scores an AttentionOp over `scratch` last computed (runScores or run):
// rows (q - pos0) * heads + h of `out` for its queries [pos0, pos0 + count).
class AttentionProbsOp {
public:
    AttentionProbsOp(ProgramCache& programs, Texture& out, const AttentionScratch& scratch,
                     const AttentionShape& shape);
    void run(int pos0, int count);

private:
    int heads_, rows_;
    Pass step_, run_;
};

}  // namespace gpt2
