// A matmul input that is the LayerNorm of x, normalised on fetch from its rows' moments u_moments
// (layer_norm_moments.frag, rows as x's), u_gamma, u_beta, u_eps and u_cols. Inputs (declared by
// the pass): u_x, u_moments, u_gamma, u_beta.
#include "fetch.glsl"
#include "layer_norm.glsl"
uniform float u_eps;

// x row `row`'s mean and 1 / sqrt(variance + eps).
vec2 inputRowNormalization(int row) { return rowNormalization(fetch(u_moments, u_moments_layout, row, 0), u_eps); }

vec4 inputTexel(int row, int i, vec2 normalization) {
    return normalizedTexel(fetch(u_x, u_x_layout, row, i), normalization, fetch(u_gamma, u_gamma_layout, 0, i),
                           fetch(u_beta, u_beta_layout, 0, i));
}
