// Shared by the LayerNorm passes (layer_norm.frag, layer_norm_moments.frag): which columns of a row
// are real. Padding columns of x are 0 but would still count towards the mean and variance.
uniform int u_cols;  // real columns

// 1 for the real columns of texel i, 0 for padding columns and texels past the row.
vec4 realColumns(int i) { return vec4(lessThan(ivec4(4 * i) + ivec4(0, 1, 2, 3), ivec4(u_cols))); }
