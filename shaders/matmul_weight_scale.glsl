// int8 weights (TexelFormat::Int8Quads): fetchFourRows gives the integers q = weight / scale, so the
// sums are multiplied by their output channel's scale, u_w_scale ([1, N]: the channel's largest
// |weight| / 127).
#include "fetch.glsl"

vec4 weightScale(int col) { return fetch(u_w_scale, u_w_scale_layout, 0, col); }
