#pragma once
// Ops whose fragments each read a few texels of their inputs: each is one shader and this one-line
// declaration (docs/architecture.md, "How to add an op").
#include "gl/pass.h"

namespace gpt2 {

// x[p] = wte[ids[p]] + wpe[p]. `ids` holds one token id per row in .x.
inline Pass embeddingPass(ProgramCache& programs, Texture& out, const Texture& ids, const Texture& wte, const Texture& wpe) {
    return Pass(programs, "embedding.frag", "", {&out}, {{"u_ids", &ids}, {"u_wte", &wte}, {"u_wpe", &wpe}});
}

// ids[p] = the best top-k candidate's id, for the rows it runs (shaders/top_candidate_token.frag).
inline Pass topCandidateTokenPass(ProgramCache& programs, Texture& ids, const Texture& candidates) {
    return Pass(programs, "top_candidate_token.frag", "", {&ids}, {{"u_candidates", &candidates}});
}

}  // namespace gpt2
