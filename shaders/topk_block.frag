// Round u_rank of the top-k search, first level: the best (logit, id) after candidate u_rank - 1 in
// each block of u_block_texels logit texels, for each row of logits. Output: row r of logits, one
// texel per block, (logit, id, 0, 0).
#include "common.glsl"
#include "topk.glsl"
// Inputs (declared by the pass): u_logits, rows of padded vocabulary logits; u_candidates, row r
// holding candidate r of logits row j in texel u_first_column + j, as (logit, id).

uniform int u_rank;
uniform int u_first_column;
uniform int u_vocab;  // real vocabulary size: padding ids never win
uniform int u_block_texels;

out vec4 o_best;

void main() {
    ivec2 c = outputCoord();
    // Before round 0 every id is eligible: start from a point before every candidate.
    vec2 previous = u_rank == 0 ? vec2(3.0e38, -1.0) : fetch(u_candidates, u_candidates_layout, u_rank - 1, u_first_column + c.x).xy;
    vec2 best = kNone;
    int first = c.y * u_block_texels;
    int last = min(first + u_block_texels, u_logits_layout.x);
    for (int t = first; t < last; ++t) {
        vec4 v = fetch(u_logits, u_logits_layout, c.x, t);
        for (int j = 0; j < 4; ++j) {
            vec2 candidate = vec2(v[j], float(4 * t + j));
            if (4 * t + j < u_vocab && comesBefore(previous, candidate) && comesBefore(candidate, best)) best = candidate;
        }
    }
    o_best = vec4(best, 0.0, 0.0);
}
