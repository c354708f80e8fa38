// out[r] = (log p(the token at position u_first + r + 1 | logits row r), 0, 0, 0): that token's logit
// minus the log-sum-exp of the row's first u_vocab logits (perplexity: one float read back per
// position instead of the vocabulary).
#include "common.glsl"
// Inputs (declared by the pass): u_logits, one row per position from u_first; u_ids, one token id
// per position in .x.

uniform int u_first;
uniform int u_vocab;
uniform int u_last_position;  // the last row of u_ids: the last position of a window has no next token

out vec4 o_log_prob;

void main() {
    int r = outputCoord().x;
    int next = int(fetch(u_ids, u_ids_layout, min(u_first + r + 1, u_last_position), 0).x);
    // An online log-sum-exp per lane: the running max m and the sum of exp(logit - m).
    vec4 m = vec4(-1.0e30), s = vec4(0.0);
    for (int t = 0; t < u_logits_layout.x; ++t) {
        // A boolean mix selects; a float mix computes x + (y - x) * a, which SwiftShader does, and
        // which turns every logit into 0 next to -1e30.
        bvec4 valid = lessThan(ivec4(4 * t) + ivec4(0, 1, 2, 3), ivec4(u_vocab));
        vec4 v = mix(vec4(-1.0e30), fetch(u_logits, u_logits_layout, r, t), valid);
        vec4 larger = max(m, v);
        s = s * exp(m - larger) + exp(v - larger) * vec4(valid);
        m = larger;
    }
    float top = max(max(m.x, m.y), max(m.z, m.w));
    float total = dot(s * exp(m - top), vec4(1.0));
    float logit = fetch(u_logits, u_logits_layout, r, next / 4)[next - next / 4 * 4];
    o_log_prob = vec4(logit - top - log(total), 0.0, 0.0, 0.0);
}
