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

// The blocks' log Σ exp so far, as (max, Σ exp(value - max)).
vec2 g_lse = vec2(-1.0e30, 0.0);

// Takes block b's list (of search rows from `list`; `head` its first entry) into the kept candidates
// (a heap: a fragment writes only the wanted-th best), reading it only while it can still place one:
// up to the list's first kNone (its block's ranks below a threshold, topk_block.frag), which a
// one-candidate search's lists never hold.
void merge(int b, vec4 head, int list, int wanted) {
    g_lse = combineLogSumExp(g_lse, head.zw);
    for (int i = 0; i < u_k; ++i) {
        vec4 entry = i == 0 ? head : fetch(u_blocks, u_blocks_layout, list + i, b);
#if MAX_CANDIDATES > 1
        if (entry.y == kNone.y) break;
#endif
        if (!enters(entry.xy, wanted)) break;
        heapKeep(entry.xy, wanted);
    }
}

void main() {
    ivec2 c = outputCoord();
    int search = c.y - u_first_column, rank = c.x, wanted = rank + 1;
    if (search < 0 || search >= u_searches) discard;
    keepNone();
    int blocks = u_blocks_layout.x, list = search * u_k_stride;
    // Four blocks' first entries are fetched before any is ranked: ranking branches on each, and a
    // fetch after such a branch waits for it (on an H200 a greedy merge took 18 µs a token, not 26).
    for (int b = 0; b < blocks; b += 4) {
        vec4 h0 = fetch(u_blocks, u_blocks_layout, list, b);
        vec4 h1 = fetch(u_blocks, u_blocks_layout, list, min(b + 1, blocks - 1));
        vec4 h2 = fetch(u_blocks, u_blocks_layout, list, min(b + 2, blocks - 1));
        vec4 h3 = fetch(u_blocks, u_blocks_layout, list, min(b + 3, blocks - 1));
        merge(b, h0, list, wanted);
        if (b + 1 < blocks) merge(b + 1, h1, list, wanted);
        if (b + 2 < blocks) merge(b + 2, h2, list, wanted);
        if (b + 3 < blocks) merge(b + 3, h3, list, wanted);
    }
    o_candidate = vec4(keptCount == wanted ? kept[0] : kNone, g_lse.x + log(g_lse.y), 0.0);
}
