// Draw u_draw + d (output row d, one texel) from the u_k candidates of a search (topk_merge.frag, texel 0 of
// rows 0 .. u_k - 1, keys already penalised and divided by the temperature), as (0, id, 0, 0):
// - top-k (u_over_candidates): the softmax over the candidates, else over the whole vocabulary
//   (the candidates' log Σ exp of every value);
// - top-p: the best candidates until their probability reaches u_top_p, renormalised;
// - then the token where the cumulative probability passes u * (their total).
// Top-p without top-k whose candidates fall short of u_top_p writes id -1: the caller reads all the
// logits instead. drawUniform(seed, draw, -1) is the draw's number, as on the CPU.
#include "common.glsl"
#include "sampling.glsl"
// Input (declared by the pass): u_candidates.

uniform int u_k;
uniform int u_over_candidates;
uniform float u_top_p;
uniform ivec2 u_seed;
uniform int u_draw;

out vec4 o_choice;

float key(int rank) { return fetch(u_candidates, u_candidates_layout, rank, 0).x; }

void main() {
    int d = outputCoord().x;
    float top = key(0), lse = fetch(u_candidates, u_candidates_layout, 0, 0).z;
    if (u_over_candidates == 1) {
        float total = 0.0;
        for (int r = 0; r < u_k; ++r) total += exp(key(r) - top);
        lse = top + log(total);
    }
    float mass = 0.0;
    int kept = 0;
    for (; kept < u_k && (kept == 0 || mass < u_top_p); ++kept) mass += exp(key(kept) - lse);
    if (u_over_candidates == 0 && mass < u_top_p) {
        o_choice = vec4(0.0, -1.0, 0.0, 0.0);
        return;
    }
    float target = drawUniform(u_seed, u_draw + d, -1) * mass, cumulative = 0.0;
    int chosen = kept - 1;
    for (int r = 0; r < kept; ++r) {
        cumulative += exp(key(r) - lse);
        if (target < cumulative) {
            chosen = r;
            break;
        }
    }
    o_choice = vec4(0.0, fetch(u_candidates, u_candidates_layout, chosen, 0).y, 0.0, 0.0);
}
