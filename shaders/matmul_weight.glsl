// Weights stored [k, n]: the 4 x 4 block of input texel i (inputs 4i .. 4i + 3) and output texel col
// (of output `part`, which only block-quantized weights need), and its product with an input texel. Input (declared by the pass): u_w, RGBA16F, RGBA32F, fp16 row
// pairs or int8 quads (fetchFourRows reads each).
#include "fetch.glsl"

mat4 weightBlock(int i, int col, int part) { return fetchFourRows(u_w, u_w_layout, i, col); }

vec4 weightTimes(mat4 block, vec4 a) { return block * a; }
