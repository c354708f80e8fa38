// out[r] = (log p(the token at position u_first + r + 1 | logits row r), 0, 0, 0): that token's logit
// minus the row's log-sum-exp (LogSumExpOp, over the row's first vocab-size logits). Perplexity reads
// back one float per position instead of the vocabulary.
#include "common.glsl"
// Inputs (declared by the pass): u_logits, one row per position from u_first; u_log_sum_exp, one per
// row in .x; u_ids, one token id per position in .x.

uniform int u_first;
uniform int u_last_position;  // the last row of u_ids: the last position of a window has no next token

out vec4 o_log_prob;

void main() {
    int r = outputCoord().x;
    int next = int(fetch(u_ids, u_ids_layout, min(u_first + r + 1, u_last_position), 0).x);
    float logit = fetch(u_logits, u_logits_layout, r, next / 4)[next - next / 4 * 4];
    o_log_prob = vec4(logit - fetch(u_log_sum_exp, u_log_sum_exp_layout, r, 0).x, 0.0, 0.0, 0.0);
}
