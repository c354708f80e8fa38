// Decode attention split over blocks of keys (flash-decoding), first pass. For the one query at
// u_pos0, output row h * u_blocks + b covers head h's keys [b, b + 1) * BLOCK_KEYS (the last block
// ends at the query): o_value = that block's softmax-weighted sum of V, and o_stats = (m, s), its
// largest score and its sum of exp(score - m), by which attention_merge.frag weighs the blocks.
// A long context then runs in heads x blocks x head texels fragments of BLOCK_KEYS keys each,
// instead of heads x head texels fragments that each loop over every key.
#include "common.glsl"
#include "attention.glsl"
// Inputs (declared by the pass): u_scores (the query's row per head, kMasked past the query), u_v.

uniform int u_blocks;  // blocks of the query's keys, the last one possibly partial

layout(location = 0) out vec4 o_value;
layout(location = 1) out vec4 o_stats;

void main() {
    ivec2 c = outputCoord();
    int head = c.x / u_blocks;
    int firstTexel = (c.x - head * u_blocks) * (BLOCK_KEYS / 4);
    int lastTexel = u_scores_layout.x - 1;
    int col = head * HEAD_TEXELS + c.y;
    // Texels past the row are clamped for the fetch (their keys are past the query, masked below).
    vec4 m4 = vec4(kMasked);
    for (int j = 0; j < BLOCK_KEYS / 4; ++j) m4 = max(m4, fetch(u_scores, u_scores_layout, head, min(firstTexel + j, lastTexel)));
    float m = maxLane(m4);
    float total = 0.0;
    vec4 acc = vec4(0.0);
    for (int j = 0; j < BLOCK_KEYS / 4; ++j) {
        int t = firstTexel + j;
        ivec4 keys = ivec4(4 * t) + ivec4(0, 1, 2, 3);
        vec4 p = exp(fetch(u_scores, u_scores_layout, head, min(t, lastTexel)) - m) * vec4(lessThanEqual(keys, ivec4(u_pos0)));
        ivec4 rows = min(keys, ivec4(u_pos0));
        total += dot(p, vec4(1.0));
        acc += p.x * fetch(u_v, u_v_layout, rows.x, col) + p.y * fetch(u_v, u_v_layout, rows.y, col) +
               p.z * fetch(u_v, u_v_layout, rows.z, col) + p.w * fetch(u_v, u_v_layout, rows.w, col);
    }
    // The block's largest score is one of its keys, so total >= 1.
    o_value = acc / total;
    o_stats = vec4(m, total, 0.0, 0.0);
}
