// out[q, head h] = sum_key softmax(scores row of (q, h))[key] * V[key, head h], keys 0..q.
#include "common.glsl"
#include "attention.glsl"
// Inputs (declared by the pass): u_scores; u_v, the layer's V cache.

out vec4 o_value;

// Keys 4t .. 4t + 3: their weights exp(score - m), zero past the query (and past the row: t is
// clamped for the fetch, then masked), added to total, and the V rows they weigh added to acc.
void addKeys(int row, int t, int queryPos, float m, int col, inout float total, inout vec4 acc) {
    vec4 p = exp(fetch(u_scores, u_scores_layout, row, min(t, u_scores_layout.x - 1)) - m) * float(4 * t <= queryPos);
    ivec4 rows = min(ivec4(4 * t) + ivec4(0, 1, 2, 3), ivec4(queryPos));
    total += dot(p, vec4(1.0));
    acc += p.x * fetch(u_v, u_v_layout, rows.x, col) + p.y * fetch(u_v, u_v_layout, rows.y, col) +
           p.z * fetch(u_v, u_v_layout, rows.z, col) + p.w * fetch(u_v, u_v_layout, rows.w, col);
}

void main() {
    ivec2 c = outputCoord();
    int queryPos = c.x;
    int row = scoreRow(queryPos, c.y / HEAD_TEXELS);
    float m = rowMax(u_scores, u_scores_layout, row, queryPos);
    float total = 0.0;
    vec4 acc = vec4(0.0);
    // 16 keys per iteration: 20 fetches in flight where 5 were (a fragment waits out each
    // iteration's latency in turn, and long contexts are many iterations).
    for (int t = 0; 4 * t <= queryPos; t += 4) {
        addKeys(row, t, queryPos, m, c.y, total, acc);
        addKeys(row, t + 1, queryPos, m, c.y, total, acc);
        addKeys(row, t + 2, queryPos, m, c.y, total, acc);
        addKeys(row, t + 3, queryPos, m, c.y, total, acc);
    }
    o_value = acc / total;
}
