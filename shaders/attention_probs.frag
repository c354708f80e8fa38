// Attention probabilities for readback: softmax of each scores row, 0 for masked keys. Output row
// (q - u_pos0) * HEADS + h holds query q's row for head h, over the run of queries from u_pos0.
#include "common.glsl"
#include "attention.glsl"
// Input (declared by the pass): u_scores.

out vec4 o_probs;

void main() {
    ivec2 c = outputCoord();
    int offset = c.x / HEADS;
    int queryPos = u_pos0 + offset, row = scoreRow(queryPos, c.x - offset * HEADS);
    float m = rowMax(u_scores, u_scores_layout, row, queryPos);
    float total = 0.0;
    for (int b = 0; 4 * b <= queryPos; ++b) total += dot(exp(fetch(u_scores, u_scores_layout, row, b) - m), vec4(1.0));
    o_probs = 4 * c.y <= queryPos ? exp(fetch(u_scores, u_scores_layout, row, c.y) - m) / total : vec4(0.0);
}
