// Attention probabilities for readback: softmax of each scores row, 0 for masked keys.
#include "common.glsl"
#include "attention.glsl"

uniform highp sampler2DArray u_scores;
uniform ivec4 u_scores_layout;

out vec4 o_probs;

void main() {
    ivec2 c = outputCoord();
    int queryPos = queryPosition(c.x);
    float m = rowMax(u_scores, u_scores_layout, c.x, queryPos);
    float total = 0.0;
    for (int b = 0; 4 * b <= queryPos; ++b) total += dot(exp(fetch(u_scores, u_scores_layout, c.x, b) - m), vec4(1.0));
    o_probs = 4 * c.y <= queryPos ? exp(fetch(u_scores, u_scores_layout, c.x, c.y) - m) / total : vec4(0.0);
}
