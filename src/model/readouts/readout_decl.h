#pragma once
// What the next-token choice and the readouts are declared with, beside the forward's graph: the
// model's view (forward_view.h), the store and the planner their own textures and heads join (so
// that the model's GPU bytes count them before anything is allocated), and the scratch they share.
#include "model/activations.h"
#include "model/forward_view.h"
#include "model/linear.h"
#include "model/ops/topk.h"

namespace gpt2 {

// What the model hands its readouts' owner while it declares its graph (Gpt2Model's constructor).
struct ReadoutSite {
    ForwardView& model;
    Activations& activations;
    LinearPlanner& plan;
    const LinearDecl& head;  // logits = ln_f(x[last]) @ wte^T: the output head of one row
    Texture& ids;            // the sequence's token ids, a row per position
    Texture& logits;         // the output head's row of the last position
};

// The block lists every top-k search of the model uses in turn (TopkOp), the tokens a search's
// repetition penalty sees, and the tokens a constrained draw may take.
struct TopkScratch {
    // Rows of the block lists: a search of up to kMaxTopk candidates, or as many lens rows as fit at
    // the lens's k.
    static constexpr int kBlockRows = 2 * kMaxTopk;
    Texture& blocks;
    Texture& heads;
    Texture& seen;
    Texture& allowed;
    int ranksPerFragment;
};

// The site, and the scratch the readouts share (Readouts declares it).
struct ReadoutDecl {
    ForwardView& model;
    Activations& activations;
    LinearPlanner& plan;
    const LinearDecl& head;
    Texture& ids;
    Texture& logits;
    TopkScratch topk;
    Texture& scored;  // rows of the output head's logits (interleaved as its row-tiled variant writes them)
};

}  // namespace gpt2
