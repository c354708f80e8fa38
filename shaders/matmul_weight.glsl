// Weights stored [k, n]: input texel a (inputs 4i .. 4i + 3) times the weights of output texel col.
// Input (declared by the pass): u_w, RGBA16F, RGBA32F or fp16 row pairs (fetchFourRows reads each).
#include "fetch.glsl"

vec4 weightTimes(vec4 a, int i, int col) { return fetchFourRows(u_w, u_w_layout, i, col) * a; }
