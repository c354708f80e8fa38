#pragma once
// The residual stream after a block, every position of a sequence (GPT2.hiddenStates, `gpt2 hidden`).
#include <vector>

#include "model/readouts/readout_decl.h"

namespace gpt2 {

class HiddenStates {
public:
    explicit HiddenStates(const ReadoutDecl& decl) : model_(decl.model) {}
    // The residual stream after block `layer` for `ids` from position 0: T x n_embd floats. Runs
    // blocks 0..layer only, so the cache no longer holds a whole sequence.
    std::vector<float> run(const std::vector<int>& ids, int layer);

private:
    ForwardView& model_;
};

}  // namespace gpt2
