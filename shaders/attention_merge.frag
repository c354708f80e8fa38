// Decode attention split over blocks of keys, second pass: out[q, head h] = the blocks' partial sums
// (attention_partial.frag) weighted by s_b exp(m_b - max m), normalised: softmax(scores) . V over
// all the keys, for the one query at u_pos0.
#include "common.glsl"
#include "attention.glsl"
#include "column_mask.glsl"
// Inputs (declared by the pass): u_partial, u_stats (rows h * u_blocks + b); with COLUMN_MASK,
// u_column_mask (ablated heads).

uniform int u_blocks;

out vec4 o_value;

void main() {
    ivec2 c = outputCoord();
    int head = c.y / HEAD_TEXELS, t = c.y - head * HEAD_TEXELS, first = head * u_blocks;
    float m = kMasked;
    for (int b = 0; b < u_blocks; ++b) m = max(m, fetch(u_stats, u_stats_layout, first + b, t).x);
    float total = 0.0;
    vec4 acc = vec4(0.0);
    for (int b = 0; b < u_blocks; ++b) {
        vec4 stats = fetch(u_stats, u_stats_layout, first + b, t);
        float w = stats.y * exp(stats.x - m);
        total += w;
        acc += w * fetch(u_partial, u_partial_layout, first + b, t);
    }
    o_value = masked(acc / total, c.y);
}
