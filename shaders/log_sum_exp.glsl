// (max m, Σ exp(logit - m)) over texels [first, last) of row r of u_logits, counting only the first
// u_vocab logits: an online log-sum-exp per lane, the four lanes combined at the end. log Σ exp is
// m + log(sum). Needs u_logits (declared by the pass) and u_vocab.

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
    float top = max(max(m.x, m.y), max(m.z, m.w));
    return vec2(top, dot(s * exp(m - top), vec4(1.0)));
}
