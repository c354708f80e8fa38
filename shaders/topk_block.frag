// Top-k search, first level: output row g * u_k_stride + r, texel b holds candidate r (best first) of
// block b of logits texels for search g, as (key, id, m, s): key = the logit as sampling warps it,
// and (m, s) = (max, Σ exp(value - m)) of the block's values (keys without noise) when
// u_log_sum_exp is on. A fragment writes OUTPUTS consecutive ranks through as many render targets
// (u_k_stride: u_k in whole groups of them): it scans its block keeping its best (last rank + 1),
// so a block takes ceil(k / OUTPUTS) scans, not k. With u_threshold on, each block's best key was
// listed already (u_heads, rank 0 of OUTPUTS rows per search) and search g's threshold found from
// them (texel u_first_column + g of row u_k - 1 of u_candidates: the k-th best of the blocks' bests,
// so the k best keys all come up to it): a block whose best falls short lists none, and the others
// list only the keys that come up to it. Search g reads logits row u_first_row + g, or with
// u_shared_row row 0 as draw u_draw + g of the same distribution.
#include "common.glsl"
#include "topk.glsl"
#include "sampling.glsl"
#include "outputs.glsl"
// Inputs (declared by the pass): u_logits, rows of padded vocabulary logits; u_seen, one row of
// vocabulary texels, lane j 1.0 where token 4t + j is in the sequence (read when u_penalty != 1);
// u_allowed, one row, bit b of float f set where token 16f + b may be drawn (read when u_masked is 1);
// u_candidates, the merge's output, and u_heads, the first ranks of every block (read with
// u_threshold).

uniform int u_k;
uniform int u_k_stride;
uniform int u_vocab;  // real vocabulary size: padding ids never win
uniform int u_block_texels;
uniform int u_first_row;
uniform int u_first_column;
uniform int u_shared_row;
uniform int u_log_sum_exp;
uniform int u_threshold;
uniform float u_inv_temperature;
uniform float u_penalty;
uniform int u_masked;

// What a token a constraint bans is ranked by: below every logit, however warped (finite: shaders
// need not keep infinities). The engine's kBannedLogit.
const float kBannedKey = -1.0e20;
uniform int u_gumbel;  // add Gumbel noise to each key (temperature sampling without top-k or top-p)
uniform ivec2 u_seed;
uniform int u_draw;

// Logit texel t of `row`, penalised, masked and divided by the temperature.
vec4 values(int row, int t) {
    vec4 v = fetch(u_logits, u_logits_layout, row, t);
    if (u_penalty != 1.0) {
        vec4 seen = fetch(u_seen, u_seen_layout, 0, t);
        for (int j = 0; j < 4; ++j)
            if (seen[j] > 0.5) v[j] = penalized(v[j], u_penalty);
    }
    if (u_masked == 1) {
        // Tokens 4t .. 4t + 3 are bits 4 (t % 4) .. 4 (t % 4) + 3 of float t / 4.
        uint bits = (uint(fetch(u_allowed, u_allowed_layout, 0, t >> 4)[(t >> 2) & 3]) >> uint(4 * (t & 3))) & 15u;
        for (int j = 0; j < 4; ++j)
            if ((bits & (1u << uint(j))) == 0u) v[j] = kBannedKey;
    }
    return v * u_inv_temperature;
}

void main() {
    ivec2 c = outputCoord();
    int search = c.x / u_k_stride, rank = c.x - search * u_k_stride, wanted = min(rank + OUTPUTS, u_k);
    int row = u_shared_row == 1 ? 0 : u_first_row + search, draw = u_draw + (u_shared_row == 1 ? search : 0);
    vec4 result[OUTPUTS];
    vec2 threshold = kNone;
    if (u_threshold == 1) {
        threshold = fetch(u_candidates, u_candidates_layout, u_k - 1, u_first_column + search).xy;
        // Only a log Σ exp (rank 0's) needs a block whose every key falls short of the threshold.
        bool scanned = u_log_sum_exp == 1 && rank == 0;
        if (!scanned && comesBefore(threshold, fetch(u_heads, u_heads_layout, search * OUTPUTS, c.y).xy)) {
            for (int s = 0; s < OUTPUTS; ++s) result[s] = vec4(kNone, 0.0, 0.0);
            store(result);
            return;
        }
    }
    keepNone();
    float top = -1.0e30;
    int first = c.y * u_block_texels;
    int last = min(first + u_block_texels, u_logits_layout.x);
    for (int t = first; t < last; ++t) {
        vec4 v = values(row, t);
#if MAX_CANDIDATES > 1
        // Below a threshold, nearly every texel: one test passes its four keys by (without noise, the
        // keys are the values). Testing each key, the demo's threshold pass took 149 µs of a 124M
        // token on an H200, not 81. One-candidate searches never take a threshold, and their block
        // pass took 75 µs, not 72, with the test compiled in.
        if (u_threshold == 1 && u_gumbel == 0 && 4 * t + 3 < u_vocab && all(lessThan(v, vec4(threshold.x)))) {
            top = max(top, maxLane(v));
            continue;
        }
#endif
        for (int j = 0; j < 4; ++j) {
            int id = 4 * t + j;
            if (id >= u_vocab) break;
            top = max(top, v[j]);
            vec2 candidate = vec2(u_gumbel == 1 ? v[j] + gumbel(u_seed, draw, id) : v[j], float(id));
            if (u_threshold == 1 && comesBefore(threshold, candidate)) continue;
            if (enters(candidate, wanted)) keep(candidate, wanted);
        }
    }
    // Σ exp(value - top) once the block's top is known: one exp per value.
    float total = 0.0;
    if (u_log_sum_exp == 1) {
        for (int t = first; t < last; ++t) {
            vec4 v = values(row, t);
            for (int j = 0; j < 4; ++j)
                if (4 * t + j < u_vocab) total += exp(v[j] - top);
        }
    }
    for (int s = 0; s < OUTPUTS; ++s) result[s] = vec4(rank + s < u_k ? keptAt(rank + s) : kNone, top, total);
    store(result);
}
