// Top-k search, second level: candidate r of search g = the r-th best of the blocks' sorted lists
// (topk_block.frag), written to row r, texel u_first_column + g as (key, id, log Σ exp of the values,
// 0); texels of other columns keep what they hold. A block's list is read only while it can still
// place a candidate.
#include "common.glsl"
#include "topk.glsl"
// Input (declared by the pass): u_blocks.

uniform int u_k;
uniform int u_k_stride;  // rows of a search's lists in u_blocks
uniform int u_first_column;
uniform int u_searches;

out vec4 o_candidate;

void main() {
    ivec2 c = outputCoord();
    int search = c.y - u_first_column, rank = c.x, wanted = rank + 1;
    if (search < 0 || search >= u_searches) discard;
    keepNone();
    vec2 lse = vec2(-1.0e30, 0.0);
    for (int b = 0; b < u_blocks_layout.x; ++b) {
        for (int i = 0; i < u_k; ++i) {
            vec4 entry = fetch(u_blocks, u_blocks_layout, search * u_k_stride + i, b);
            if (i == 0) lse = combineLogSumExp(lse, entry.zw);
            if (!enters(entry.xy, wanted)) break;
            keep(entry.xy, wanted);
        }
    }
    o_candidate = vec4(kept[rank], lse.x + log(lse.y), 0.0);
}
