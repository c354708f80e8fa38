// A matmul input that is the LayerNorm of x, normalised on fetch from its rows' moments, u_gamma,
// u_beta, u_eps and u_cols. The moments come from u_moments (layer_norm_moments.frag, rows as x's)
// or, with MOMENTS_HERE, are summed here over the whole row (the one-row matmul's vertex shader,
// where that replaces the moments pass). Inputs (declared by the pass): u_x, u_gamma, u_beta, and
// without MOMENTS_HERE u_moments.
#include "fetch.glsl"
#include "layer_norm.glsl"
uniform float u_eps;

// x row `row`'s mean and 1 / sqrt(variance + eps).
#ifdef MOMENTS_HERE
vec2 inputRowNormalization(int row) { return rowNormalization(shiftedSums(row, 0, u_x_layout.x, SPLIT_TEXELS), u_eps); }
#else
vec2 inputRowNormalization(int row) { return rowNormalization(fetch(u_moments, u_moments_layout, row, 0), u_eps); }
#endif

vec4 inputTexel(int row, int i, vec2 normalization) {
    return normalizedTexel(fetch(u_x, u_x_layout, row, i), normalization, fetch(u_gamma, u_gamma_layout, 0, i),
                           fetch(u_beta, u_beta_layout, 0, i));
}
