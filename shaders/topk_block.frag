// Top-k search, first level: output row g * u_k + r, texel b holds candidate r (best first) of block b
// of logits texels for search g, as (key, id, m, s): key = the logit as sampling warps it, and
// (m, s) = (max, Σ exp(value - m)) of the block's values (keys without noise) when u_log_sum_exp is
// on. Each of the k fragments of a block scans the whole block, keeping its best r + 1: k small
// passes' worth of work in one pass. Search g reads logits row u_first_row + g, or with u_shared_row
// row 0 as draw u_draw + g of the same distribution.
#include "common.glsl"
#include "topk.glsl"
#include "sampling.glsl"
// Inputs (declared by the pass): u_logits, rows of padded vocabulary logits; u_seen, one row of
// vocabulary texels, lane j 1.0 where token 4t + j is in the sequence (read when u_penalty != 1).

uniform int u_k;
uniform int u_vocab;  // real vocabulary size: padding ids never win
uniform int u_block_texels;
uniform int u_first_row;
uniform int u_shared_row;
uniform int u_log_sum_exp;
uniform float u_inv_temperature;
uniform float u_penalty;
uniform int u_gumbel;  // add Gumbel noise to each key (temperature sampling without top-k or top-p)
uniform ivec2 u_seed;
uniform int u_draw;

out vec4 o_candidate;

void main() {
    ivec2 c = outputCoord();
    int search = c.x / u_k, rank = c.x - search * u_k, wanted = rank + 1;
    int row = u_shared_row == 1 ? 0 : u_first_row + search, draw = u_draw + (u_shared_row == 1 ? search : 0);
    keepNone();
    vec2 lse = vec2(-1.0e30, 0.0);
    int first = c.y * u_block_texels;
    int last = min(first + u_block_texels, u_logits_layout.x);
    for (int t = first; t < last; ++t) {
        vec4 v = fetch(u_logits, u_logits_layout, row, t);
        vec4 seen = u_penalty != 1.0 ? fetch(u_seen, u_seen_layout, 0, t) : vec4(0.0);
        for (int j = 0; j < 4; ++j) {
            int id = 4 * t + j;
            if (id >= u_vocab) break;
            float value = (seen[j] > 0.5 ? penalized(v[j], u_penalty) : v[j]) * u_inv_temperature;
            if (u_log_sum_exp == 1) lse = combineLogSumExp(lse, vec2(value, 1.0));
            vec2 candidate = vec2(u_gumbel == 1 ? value + gumbel(u_seed, draw, id) : value, float(id));
            if (enters(candidate, wanted)) keep(candidate, wanted);
        }
    }
    o_candidate = vec4(kept[rank], lse);
}
