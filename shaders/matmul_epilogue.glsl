// What a matmul does to its sums: scales them (weightScale: int8 weights), adds BIAS (u_bias) and
// ADDEND (u_addend: a caller's steering vector, zeros without one), applies ACTIVATION (a kind of
// activation.glsl), zeroes the columns of COLUMN_MASK (column_mask.glsl), then adds RESIDUAL
// (u_residual, rows as the output). Every split-K instance scales and masks its part; only instance 0
// adds the rest, and a nonlinear activation cannot be split (its consumer applies it to its input
// instead, and activates a masked 0 to 0).
#include "fetch.glsl"
#include "activation.glsl"
#include "column_mask.glsl"

vec4 epilogue(vec4 acc, int row, int col) {
    acc *= weightScale(col);
    if (matmulInstance() != 0) return masked(acc, col);
#ifdef BIAS
    acc += fetch(u_bias, u_bias_layout, 0, col);
#endif
#ifdef ADDEND
    acc += fetch(u_addend, u_addend_layout, 0, col);
#endif
    acc = masked(activate(acc, ACTIVATION), col);
#ifdef RESIDUAL
    acc += fetch(u_residual, u_residual_layout, row, col);
#endif
    return acc;
}
