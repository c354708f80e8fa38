// Weights stored [n, k] (the tied lm_head reads the rows of wte): input texel a (inputs 4i .. 4i + 3)
// times the weights of output texel col. Input (declared by the pass): u_w, as matmul_weight.glsl's.
#include "fetch.glsl"

vec4 weightTimes(vec4 a, int i, int col) { return a * fetchFourRows(u_w, u_w_layout, col, i); }
