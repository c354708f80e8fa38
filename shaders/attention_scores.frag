// scores[scoreRow(q, h), key] = scale * dot(Q[q, head h], K[key, head h]), masked for key > q. Each
// fragment computes ROWS consecutive queries of one head (u_stride is a multiple of ROWS), so each
// K texel it fetches serves ROWS queries.
#include "common.glsl"
#include "attention.glsl"
// Inputs (declared by the pass): u_q, the queries at their positions, or with PAIRED_QUERIES the run's
// queries as fp16 row pairs from u_pos0 on (pair p: queries u_pos0 + 2p and u_pos0 + 2p + 1;
// Tuning::halfPromptInputs); u_k, the layer's K cache (one row per position, heads side by side).

uniform float u_scale;

#define OUTPUTS ROWS
#include "outputs.glsl"
#include "unroll.glsl"

// Loop bodies over the fragment's rows r (unroll.glsl). Rows past the run (padding to whole groups)
// repeat its last query; nothing reads them.
#define START_ROW(unused, r) s[r] = vec4(kMasked); d[r] = vec4(0.0); query[r] = min(first + r, lastQuery());
#define DOT_ROW(unused, r) d[r] += fetch(u_q, u_q_layout, query[r], base + t) * k;
// A fragment's first query is u_pos0 plus a multiple of ROWS, so its rows r and r + 1 (r even) are
// one pair: half the query fetches, which with the K texels' were what limited this pass. Pairs past
// the run repeat its last, as the rows do.
#define START_PAIR(unused, r) pair[r / 2] = min((first - u_pos0 + r) / 2, (u_count - 1) / 2);
#define DOT_PAIR(unused, r) { \
    mat2x4 qs = fetchPair(u_q, u_q_layout, pair[r / 2], base + t); \
    d[r] += qs[0] * k; \
    d[r + 1] += qs[1] * k; }
#define MASK_ROW(unused, r) s[r] = mix(d[r] * u_scale, vec4(kMasked), vec4(greaterThan(keys, ivec4(query[r]))));

void main() {
    ivec2 c = outputCoord();
    int head = c.x / u_stride;
    int first = u_pos0 + c.x - head * u_stride;
    int key0 = 4 * c.y;
    vec4 s[ROWS], d[ROWS];
    int query[ROWS];
    EACH_ROW(START_ROW, 0)
    if (key0 > query[ROWS - 1]) {
        store(s);
        return;
    }
    // Keys past the last query are clamped to a valid cache row and masked afterwards.
    ivec4 keys = ivec4(key0) + ivec4(0, 1, 2, 3);
    ivec4 rows = min(keys, ivec4(query[ROWS - 1]));
    int base = head * HEAD_TEXELS;
#ifdef PAIRED_QUERIES
    int pair[ROWS / 2];
    EACH_ROW_PAIR(START_PAIR, 0)
#endif
    for (int t = 0; t < HEAD_TEXELS; ++t) {
        // Columns are the four keys: q * k is the query's dot product with each.
        mat4 k = mat4(fetch(u_k, u_k_layout, rows.x, base + t), fetch(u_k, u_k_layout, rows.y, base + t),
                      fetch(u_k, u_k_layout, rows.z, base + t), fetch(u_k, u_k_layout, rows.w, base + t));
#ifdef PAIRED_QUERIES
        EACH_ROW_PAIR(DOT_PAIR, 0)
#else
        EACH_ROW(DOT_ROW, 0)
#endif
    }
    EACH_ROW(MASK_ROW, 0)
    store(s);
}
