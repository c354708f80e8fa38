// out[u_first_row + r] = (log Σ exp of logits row r, 0, 0, 0): with the top-k of the row, the
// probabilities of the k best tokens (the logit lens reads back k candidates and one float per
// position).
#include "common.glsl"
// Input (declared by the pass): u_logits, one row per position.

uniform int u_vocab;
uniform int u_first_row;

#include "log_sum_exp.glsl"

out vec4 o_log_sum_exp;

void main() { o_log_sum_exp = vec4(rowLogSumExp(outputCoord().x - u_first_row), 0.0, 0.0, 0.0); }
