// out[q, head h] = sum_key softmax(scores row of (q, h))[key] * V[key, head h], keys 0..q, for ROWS
// consecutive positions per fragment (each V texel it fetches then serves ROWS queries). With
// ROW_MAX, each row's largest score comes from u_row_max (attention_row_max.frag); else the
// fragment finds it.
#include "common.glsl"
#include "attention.glsl"
#include "column_mask.glsl"
// Inputs (declared by the pass): u_scores; u_v, the layer's V cache; with ROW_MAX, u_row_max; with
// COLUMN_MASK, u_column_mask (ablated heads).

#define OUTPUTS ROWS
#include "outputs.glsl"
#include "unroll.glsl"

// One key texel per iteration when a fragment has many rows (ROWS score fetches besides 4 of V);
// four for one row, to keep 20 fetches in flight where 5 were (a fragment waits out each
// iteration's latency in turn, and long contexts are many iterations).
#define KEY_TEXELS_PER_ITERATION (ROWS == 1 ? 4 : 1)

#ifdef ROW_MAX
#define LARGEST_SCORE(r) fetch(u_row_max, u_row_max_layout, row[r], 0).x
#else
#define LARGEST_SCORE(r) rowMax(u_scores, u_scores_layout, row[r], query[r])
#endif
// Loop bodies over the fragment's rows r (unroll.glsl). Positions of the group outside the run (a
// group starts and ends on a multiple of ROWS) compute a query of the run: their rows of the output
// are scratch, which no later pass reads.
#define START_ROW(unused, r) \
    query[r] = clamp(c.x + r, u_pos0, lastQuery()); \
    row[r] = scoreRow(query[r], head); \
    m[r] = LARGEST_SCORE(r); \
    total[r] = 0.0; \
    acc[r] = vec4(0.0);
#define WEIGH_ROW(unused, r) { \
    vec4 p = exp(fetch(u_scores, u_scores_layout, row[r], min(t, lastTexel)) - m[r]) * inRange; \
    total[r] += dot(p, vec4(1.0)); \
    acc[r] += v * p; }
#define NORMALIZE_ROW(unused, r) acc[r] = masked(acc[r] / total[r], c.y);

void main() {
    ivec2 c = outputCoord();
    int head = c.y / HEAD_TEXELS;
    int query[ROWS], row[ROWS];
    float m[ROWS], total[ROWS];
    vec4 acc[ROWS];
    EACH_ROW(START_ROW, 0)
    int lastKey = query[ROWS - 1], lastTexel = u_scores_layout.x - 1;
    for (int t0 = 0; 4 * t0 <= lastKey; t0 += KEY_TEXELS_PER_ITERATION) {
        for (int i = 0; i < KEY_TEXELS_PER_ITERATION; ++i) {
            // Texels past the last key are clamped for the fetch and weigh nothing; keys past a
            // row's query score kMasked, whose exp() is 0.
            int t = t0 + i;
            ivec4 keys = min(ivec4(4 * t) + ivec4(0, 1, 2, 3), ivec4(lastKey));
            mat4 v = mat4(fetch(u_v, u_v_layout, keys.x, c.y), fetch(u_v, u_v_layout, keys.y, c.y),
                          fetch(u_v, u_v_layout, keys.z, c.y), fetch(u_v, u_v_layout, keys.w, c.y));
            float inRange = float(4 * t <= lastKey);
            EACH_ROW(WEIGH_ROW, 0)
        }
    }
    EACH_ROW(NORMALIZE_ROW, 0)
    store(acc);
}
