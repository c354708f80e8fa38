// Weights stored [n, k] (the tied lm_head reads the rows of wte): the 4 x 4 block of input texel i
// (inputs 4i .. 4i + 3) and output texel col, and its product with an input texel. Input (declared
// by the pass): u_w, as matmul_weight.glsl's.
#include "fetch.glsl"

mat4 weightBlock(int i, int col, int part) { return fetchFourRows(u_w, u_w_layout, col, i); }

vec4 weightTimes(mat4 block, vec4 a) { return a * block; }
