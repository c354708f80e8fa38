// The input texels of a matmul as it multiplies them (matmul.frag, or matmul_row.vert for one row):
//   INPUT_LAYER_NORM  LayerNorm of x: its rows' moments u_moments (layer_norm_moments.frag, rows as
//                     x's), u_gamma, u_beta, u_eps, u_cols;
//   INPUT_ACTIVATION  otherwise, an activation of x (activation.glsl; 0: x itself).
#include "activation.glsl"
#ifdef INPUT_LAYER_NORM
#include "layer_norm.glsl"
uniform float u_eps;
#endif
#ifndef INPUT_ACTIVATION
#define INPUT_ACTIVATION 0
#endif

// What inputTexel needs of x row `row` beyond its texels: with INPUT_LAYER_NORM its mean and
// 1 / sqrt(variance + eps).
vec2 inputRowNormalization(int row) {
#ifdef INPUT_LAYER_NORM
    return rowNormalization(fetch(u_moments, u_moments_layout, row, 0), u_eps);
#else
    return vec2(0.0);
#endif
}

vec4 inputTexel(int row, int i, vec2 normalization) {
    vec4 x = fetch(u_x, u_x_layout, row, i);
#ifdef INPUT_LAYER_NORM
    return normalizedTexel(x, normalization, fetch(u_gamma, u_gamma_layout, 0, i), fetch(u_beta, u_beta_layout, 0, i));
#else
    return activate(x, INPUT_ACTIVATION);
#endif
}
