// Shared by the LayerNorm passes (layer_norm.frag, layer_norm_moments.frag): which columns of a row
// are real. Padding columns of x are 0 but would still count towards the mean and variance.
uniform int u_cols;  // real columns

// 1 for the real columns of texel i, 0 for padding columns and texels past the row.
vec4 realColumns(int i) { return vec4(lessThan(ivec4(4 * i) + ivec4(0, 1, 2, 3), ivec4(u_cols))); }

// Row mean and 1 / sqrt(variance + eps) from the row's moments texel (layer_norm_moments.frag).
vec2 rowNormalization(vec4 moments, float eps) {
    float shiftedMean = moments.x / float(u_cols);
    float variance = max(moments.y / float(u_cols) - shiftedMean * shiftedMean, 0.0);
    return vec2(moments.z + shiftedMean, inversesqrt(variance + eps));
}

// A texel of x normalised by its row's (mean, 1 / sqrt(variance + eps)), scaled and shifted.
// Padding columns have gamma = beta = 0, so they stay 0.
vec4 normalizedTexel(vec4 x, vec2 normalization, vec4 gamma, vec4 beta) {
    return (x - normalization.x) * normalization.y * gamma + beta;
}
