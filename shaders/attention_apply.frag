// out[q, head h] = sum_key softmax(scores row of (q, h))[key] * V[key, head h], keys 0..q.
#include "common.glsl"
#include "attention.glsl"

uniform highp sampler2DArray u_scores;
uniform highp sampler2DArray u_v;  // the layer's V cache

out vec4 o_value;

void main() {
    ivec2 c = outputCoord();
    int queryPos = c.x;
    int row = scoreRow(queryPos, c.y / u_head_texels);
    float m = rowMax(u_scores, u_scores_layout, row, queryPos);
    float total = 0.0;
    vec4 acc = vec4(0.0);
    for (int b = 0; 4 * b <= queryPos; ++b) {
        vec4 p = exp(fetch(u_scores, u_scores_layout, row, b) - m);  // masked keys give 0
        ivec4 rows = min(ivec4(4 * b) + ivec4(0, 1, 2, 3), ivec4(queryPos));
        total += dot(p, vec4(1.0));
        acc += p.x * fetch(u_v, u_v_layout, rows.x, c.y) + p.y * fetch(u_v, u_v_layout, rows.y, c.y) +
               p.z * fetch(u_v, u_v_layout, rows.z, c.y) + p.w * fetch(u_v, u_v_layout, rows.w, c.y);
    }
    o_value = acc / total;
}
