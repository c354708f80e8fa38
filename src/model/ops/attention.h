#pragma once
// Causal self-attention over a KV cache, as two passes per layer: the scores of a chunk of queries
// (shaders/attention_scores.frag), then softmax(scores) . V (shaders/attention_apply.frag); and the
// probabilities for readback (shaders/attention_probs.frag).
#include <optional>

#include "gl/pass.h"

namespace gpt2 {

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
// Probabilities of the scores rows (row for row: the chunk of queries from u_pos0), zero for masked
// keys (for readback).
Pass attentionProbsPass(ProgramCache& programs, Texture& out, const Texture& scores, const AttentionShape& shape);

void setAttentionPosition(Pass& pass, int pos0);

// Decode attention split over blocks of keys (flash-decoding; shaders/attention_partial.frag, then
// shaders/attention_merge.frag), for a decode step whose context has more than blockKeys keys.
struct KeyBlocks {
    int blockKeys = 0;  // a multiple of 4
    // Both [heads * ceil(positions / blockKeys), head texels * 4], rows (head, block): each block's
    // weighted sum of V, and its (largest score, sum of exp(score - largest)).
    Texture* partial = nullptr;
    Texture* stats = nullptr;
};

// One layer's attention: a = softmax(q k^T * scale, causal) v for queries [pos0, pos0 + count): the
// scores, then softmax . V in one pass, or over blocks of keys (`keyBlocks`) for long decode steps.
class AttentionOp {
public:
    AttentionOp(ProgramCache& programs, Texture& out, Texture& scores, const Texture& q, const Texture& kCache,
                const Texture& vCache, const AttentionShape& shape, float scale, const KeyBlocks* keyBlocks = nullptr);
    void run(int pos0, int count);
    // The scores alone (the chunk's rows of `scores`), for attention readback.
    void runScores(int pos0, int count);

private:
    int heads_;
    Pass scores_, apply_;
    int blockKeys_ = 0;  // 0: never split
    std::optional<Pass> partial_, merge_;
};

}  // namespace gpt2
