// A matmul input that is x, or an activation of it (INPUT_ACTIVATION, a kind of activation.glsl):
// the MLP projection activates the sums a split c_fc left. Input (declared by the pass): u_x.
#include "fetch.glsl"
#include "activation.glsl"

vec2 inputRowNormalization(int row) { return vec2(0.0); }

vec4 inputTexel(int row, int i, vec2 unused) { return activate(fetch(u_x, u_x_layout, row, i), INPUT_ACTIVATION); }
