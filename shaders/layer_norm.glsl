// Shared by the LayerNorm passes (layer_norm.frag, layer_norm_moments.frag): which columns of a row
// are real. Padding columns of x are 0 but would still count towards the mean and variance.
uniform int u_cols;  // real columns

// 1 for the real columns of texel i, 0 for padding columns and texels past the row.
vec4 realColumns(int i) { return vec4(lessThan(ivec4(4 * i) + ivec4(0, 1, 2, 3), ivec4(u_cols))); }

// The moments of texels [first, first + count) of x's row `row` (u_x, declared by the pass):
// (sum(x - c), sum((x - c)^2), c, 0), c being the mean of the row's first `shiftTexels` texels (why
// shifted sums: layer_norm_moments.frag).
vec4 shiftedSums(int row, int first, int count, int shiftTexels) {
    vec4 firstSum = vec4(0.0), firstCount = vec4(0.0);
    for (int i = 0; i < shiftTexels; ++i) {
        firstSum += fetch(u_x, u_x_layout, row, i) * realColumns(i);
        firstCount += realColumns(i);
    }
    float shift = dot(firstSum, vec4(1.0)) / dot(firstCount, vec4(1.0));
    vec4 sum = vec4(0.0), squares = vec4(0.0);
    for (int j = 0; j < count; ++j) {
        int i = first + j;
        vec4 d = (fetch(u_x, u_x_layout, row, i) - shift) * realColumns(i);
        sum += d;
        squares += d * d;
    }
    return vec4(dot(sum, vec4(1.0)), dot(squares, vec4(1.0)), shift, 0.0);
}

// Row mean and 1 / sqrt(variance + eps) from the row's moments (shiftedSums over the whole row).
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
