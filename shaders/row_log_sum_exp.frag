// out[u_first_row + r] = (log Σ exp of logits row r, 0, 0, 0), second level: merges the row's blocks
// of (max, Σ exp(logit - max)). With the top-k of the row, the probabilities of the k best tokens
// (the logit lens reads back k candidates and one float per position).
#include "common.glsl"
// Input (declared by the pass): u_blocks, a row of block partials per row of logits.

uniform int u_first_row;

out vec4 o_log_sum_exp;

void main() {
    int r = outputCoord().x - u_first_row;
    float top = -1.0e30;
    for (int b = 0; b < u_blocks_layout.x; ++b) top = max(top, fetch(u_blocks, u_blocks_layout, r, b).x);
    float total = 0.0;
    for (int b = 0; b < u_blocks_layout.x; ++b) {
        vec2 partial = fetch(u_blocks, u_blocks_layout, r, b).xy;
        total += partial.y * exp(partial.x - top);
    }
    o_log_sum_exp = vec4(top + log(total), 0.0, 0.0, 0.0);
}
