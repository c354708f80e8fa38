// log Σ exp of rows of logits on the GPU, first level: for each row and block of u_block_texels
// texels, (max m, Σ exp(logit - m), 0, 0) over the block's first-u_vocab logits (one long serial
// loop per row would leave a GPU all but idle).
#include "common.glsl"
// Input (declared by the pass): u_logits, one row per position.

uniform int u_vocab;
uniform int u_block_texels;

// (max m, Σ exp(logit - m)) over texels [first, last) of row r, counting only the first u_vocab
// logits: an online log-sum-exp per lane, the four lanes combined at the end.
vec2 logSumExpPartial(int r, int first, int last) {
    vec4 m = vec4(-1.0e30), s = vec4(0.0);
    for (int t = first; t < last; ++t) {
        // A boolean mix selects; a float mix computes x + (y - x) * a, which SwiftShader does, and
        // which turns every logit into 0 next to -1e30.
        bvec4 valid = lessThan(ivec4(4 * t) + ivec4(0, 1, 2, 3), ivec4(u_vocab));
        vec4 v = mix(vec4(-1.0e30), fetch(u_logits, u_logits_layout, r, t), valid);
        vec4 larger = max(m, v);
        s = s * exp(m - larger) + exp(v - larger) * vec4(valid);
        m = larger;
    }
    float top = maxLane(m);
    return vec2(top, dot(s * exp(m - top), vec4(1.0)));
}

out vec4 o_partial;

void main() {
    ivec2 c = outputCoord();
    int first = c.y * u_block_texels;
    o_partial = vec4(logSumExpPartial(c.x, first, min(first + u_block_texels, u_logits_layout.x)), 0.0, 0.0);
}
