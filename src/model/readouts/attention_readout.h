#pragma once
// The attention probabilities of one layer over a whole sequence (GPT2.attention, `gpt2 attention`).
#include <vector>

#include "model/readouts/readout_decl.h"

namespace gpt2 {

class AttentionReadout {
public:
    explicit AttentionReadout(const ReadoutDecl& decl) : model_(decl.model) {}
    // Attention probabilities of `layer` for the sequence `ids` (positions 0..T-1), heads x T x T.
    // Recomputes layers 0..layer; the cache rows it rewrites get the same values.
    std::vector<float> run(const std::vector<int>& ids, int layer);

private:
    ForwardView& model_;
};

}  // namespace gpt2
