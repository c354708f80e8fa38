// out[r, n] = epilogue( sum_k in[r + IN_ROW_OFFSET, k] * W[k, n] ), four output columns per fragment.
// Compile-time options (program variants, one source):
//   TRANSPOSED_WEIGHT  W is stored as [n, k] (the tied lm_head reads wte rows)
//   PARTS 1|3          outputs; part p reads W columns p * u_part_texels + texel (fused Q, K, V)
//   BIAS, RESIDUAL, ACTIVATION (of the output): activation.glsl
//   INPUT_ACTIVATION, INPUT_LAYER_NORM: what is applied to `in` (matmul_input.glsl)
//   INPUT_FROM_VERTEX  one output row, split: the input texels come from matmul_row.vert
//   SPLIT_TEXELS       split-K: instance s sums input texels [s, s + 1) * SPLIT_TEXELS (a divisor of
//                      the input texels, so the loop has a constant trip count that the compiler
//                      unrolls, issuing every fetch before the first returns). The instances are
//                      added by blending (src/gl/pass.h); only instance 0 adds the bias and
//                      residual, and a nonlinear ACTIVATION cannot be split (the consumer applies it
//                      as its INPUT_ACTIVATION).
#include "common.glsl"
#include "activation.glsl"
#ifdef INPUT_FROM_VERTEX
flat in vec4 v_input[SPLIT_TEXELS];
#else
#include "matmul_input.glsl"
#endif

#ifndef PARTS
#define PARTS 1
#endif
#ifndef ACTIVATION
#define ACTIVATION 0
#endif
#ifdef SPLIT_TEXELS
flat in int v_instance;
#endif

// Inputs (declared by the pass): u_x and those of matmul_input.glsl's options; u_w, RGBA16F/RGBA32F
// or fp16 row pairs (fetchFourRows reads either); with BIAS u_bias, with RESIDUAL u_residual.
uniform int u_in_row_offset;
uniform int u_part_texels;

layout(location = 0) out vec4 o_part0;
#if PARTS == 3
layout(location = 1) out vec4 o_part1;
layout(location = 2) out vec4 o_part2;
#endif

// The input texel a (inputs 4i .. 4i + 3) times the weights of output texel col.
vec4 weightTimes(vec4 a, int i, int col) {
#ifdef TRANSPOSED_WEIGHT
    return a * fetchFourRows(u_w, u_w_layout, col, i);
#else
    return fetchFourRows(u_w, u_w_layout, i, col) * a;
#endif
}

vec4 epilogue(vec4 acc, int row, int col) {
#ifdef SPLIT_TEXELS
    if (v_instance != 0) return acc;
#endif
#ifdef BIAS
    acc += fetch(u_bias, u_bias_layout, 0, col);
#endif
    acc = activate(acc, ACTIVATION);
#ifdef RESIDUAL
    acc += fetch(u_residual, u_residual_layout, row, col);
#endif
    return acc;
}

void main() {
    ivec2 c = outputCoord();
#ifndef INPUT_FROM_VERTEX
    int inRow = c.x + u_in_row_offset;
    vec2 normalization = inputRowNormalization(inRow);
#endif
    vec4 acc[PARTS];
    for (int p = 0; p < PARTS; ++p) acc[p] = vec4(0.0);
#ifdef SPLIT_TEXELS
    for (int j = 0; j < SPLIT_TEXELS; ++j) {
        int i = v_instance * SPLIT_TEXELS + j;
#else
    for (int i = 0; i < u_x_layout.x; ++i) {
#endif
#ifdef INPUT_FROM_VERTEX
        vec4 a = v_input[j];
#else
        vec4 a = inputTexel(inRow, i, normalization);
#endif
        for (int p = 0; p < PARTS; ++p) acc[p] += weightTimes(a, i, c.y + p * u_part_texels);
    }
    o_part0 = epilogue(acc[0], c.x, c.y);
#if PARTS == 3
    o_part1 = epilogue(acc[1], c.x, c.y + u_part_texels);
    o_part2 = epilogue(acc[2], c.x, c.y + 2 * u_part_texels);
#endif
}
