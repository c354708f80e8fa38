// What a matmul adds to its sums: BIAS (u_bias), ACTIVATION (a kind of activation.glsl), then
// RESIDUAL (u_residual, rows as the output). Of split-K instances only instance 0 adds them, and a
// nonlinear activation cannot be split (its consumer applies it to its input instead).
#include "fetch.glsl"
#include "activation.glsl"

vec4 epilogue(vec4 acc, int row, int col) {
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
