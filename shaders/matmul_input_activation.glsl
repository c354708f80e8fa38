// A matmul input that is x, or an activation of it (INPUT_ACTIVATION, a kind of activation.glsl):
// the MLP projection activates the sums a split c_fc left. Input (declared by the pass): u_x. With
// PAIRED_ROWS (x of fp16 row pairs, matmul.frag) also two rows at a time.
#include "fetch.glsl"
#include "activation.glsl"

vec2 inputRowNormalization(int row) { return vec2(0.0); }

vec4 inputTexel(int row, int i, vec2 unused) { return activate(fetch(u_x, u_x_layout, row, i), INPUT_ACTIVATION); }

#ifdef PAIRED_ROWS
// Rows `row` (even) and row + 1 of x, fp16 row pairs, from one fetch.
mat2x4 inputTexelPair(int row, int i) {
    mat2x4 pair = fetchPair(u_x, u_x_layout, row >> 1, i);
    return mat2x4(activate(pair[0], INPUT_ACTIVATION), activate(pair[1], INPUT_ACTIVATION));
}
#endif
