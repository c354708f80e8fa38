#pragma once
// Ops whose fragments each read a few texels of their inputs: each is one shader and this one-line
// declaration (docs/architecture.md, "How to add an op").
#include <string>

#include "gl/pass.h"
#include "model/ops/matmul.h"

namespace gpt2 {

// x[p] = wte[ids[p]] + wpe[p]. `ids` holds one token id per row in .x; an int8 wte comes with its
// rows' scales ([1, rows]), a block-quantized one with its blocks' scales and offsets.
inline Pass embeddingPass(ProgramCache& programs, Texture& out, const Texture& ids, const WeightMatrix& wte,
                          const Texture& wpe) {
    PassInputs inputs{{"u_ids", &ids}, {"u_wte", wte.values}, {"u_wpe", &wpe}};
    std::string defines;
    if (wte.scales) inputs.push_back({"u_wte_scale", wte.scales});
    if (wte.offsets) inputs.push_back({"u_wte_offset", wte.offsets});
    if (wte.blockTexels > 0)
        defines += "#define WTE_BLOCK_TEXELS " + std::to_string(wte.blockTexels) + "\n";
    else if (wte.scales)
        defines += "#define WTE_SCALE 1\n";
    if (wte.offsets) defines += "#define WTE_OFFSETS 1\n";
    return Pass(programs, "embedding.frag", defines, {&out}, inputs);
}

// ids[p] = the id in texel 0 of `candidates` (a search's best, or a draw's choice), for the rows it
// runs (shaders/chosen_token.frag).
inline Pass chosenTokenPass(ProgramCache& programs, Texture& ids, const Texture& candidates) {
    return Pass(programs, "chosen_token.frag", "", {&ids}, {{"u_candidates", &candidates}});
}

// out[r] = log p(ids[first + r + 1] | logits row r) = that logit - logSumExp[r] (LogSumExpOp; set
// u_first per run; ids past u_last_position are clamped to it).
inline Pass tokenLogProbPass(ProgramCache& programs, Texture& out, const Texture& logits, const Texture& logSumExp,
                             const Texture& ids) {
    Pass pass(programs, "token_log_prob.frag", "", {&out},
              {{"u_logits", &logits}, {"u_log_sum_exp", &logSumExp}, {"u_ids", &ids}});
    pass.set("u_first", 0).set("u_last_position", ids.rows() - 1);
    return pass;
}

// out[r] = activation(x[r + u_in_row_offset]) (shaders/activation.frag; set u_in_row_offset per run).
inline Pass activationPass(ProgramCache& programs, Texture& out, const Texture& x, int activation) {
    Pass pass(programs, "activation.frag", "#define ACTIVATION " + std::to_string(activation) + "\n", {&out},
              {{"u_x", &x}});
    pass.set("u_in_row_offset", 0);
    return pass;
}

}  // namespace gpt2
