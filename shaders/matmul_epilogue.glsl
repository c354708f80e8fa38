// What a matmul does to its sums: scales them (weightScale: int8 weights), adds BIAS (u_bias),
// applies ACTIVATION (a kind of activation.glsl), then adds RESIDUAL (u_residual, rows as the
// output). Every split-K instance scales its part; only instance 0 adds the rest, and a nonlinear
// activation cannot be split (its consumer applies it to its input instead).
#include "fetch.glsl"
#include "activation.glsl"

vec4 epilogue(vec4 acc, int row, int col) {
    acc *= weightScale(col);
    if (matmulInstance() != 0) return acc;
#ifdef BIAS
    acc += fetch(u_bias, u_bias_layout, 0, col);
#endif
    acc = activate(acc, ACTIVATION);
#ifdef RESIDUAL
    acc += fetch(u_residual, u_residual_layout, row, col);
#endif
    return acc;
}
