// out[r, n] = epilogue( sum_k in[r + u_in_row_offset, k] * W[k, n] ), four output columns per
// fragment, into PARTS outputs (1, or 3 for the fused Q, K, V: part p reads W columns from
// (u_first_part + p) * u_part_texels; a pass per part sets u_first_part), for ROWS consecutive rows
// (> 1: register tiling, Pass::writeRowGroups; each weight fetch then serves ROWS rows). This file is
// the loop; its declaration (src/model/ops/matmul.cpp) composes the variant from includes placed
// before it, one of each kind:
//   input side  matmul_input_fragment.glsl (each fragment fetches x, through matmul_input_norm.glsl
//               or matmul_input_activation.glsl) or matmul_input_vertex.glsl (one row, from
//               matmul_row.vert): MatmulInput matmulInputRow(row), vec4 matmulInput(input, j, i),
//               and with PAIRED_ROWS mat2x4 matmulInputPair(input, j, i)
//   K range     matmul_whole_k.glsl (one loop) or matmul_split_k.glsl (blended instances):
//               INSTANCE_TEXELS, matmulInstance()
//   weights     matmul_weight.glsl ([k, n]) or matmul_weight_transposed.glsl ([n, k], the tied
//               lm_head): mat4 weightBlock(i, col, part), whatever the texture's format, and
//               vec4 weightTimes(block, a)
//   scales      matmul_weight_unscaled.glsl or matmul_weight_scale.glsl (int8 weights):
//               vec4 weightScale(col)
//   epilogue    matmul_epilogue.glsl: vec4 epilogue(acc, row, col), bias, activation, residual
#include "common.glsl"

uniform int u_part_texels;
uniform int u_first_part;

// Target p * ROWS + s: part p, row first + s.
#define OUTPUTS (PARTS * ROWS)
#include "outputs.glsl"
#include "unroll.glsl"

// Loop bodies over rows s and parts p, written out by EACH_ROW, EACH_PART and EACH_OUTPUT (unroll.glsl).
#define PART_COLUMN(p) (c.y + (u_first_part + p) * u_part_texels)
#define START_ROW(unused, s) src[s] = matmulInputRow(c.x + s);
#define START_OUTPUT(p, s) acc[p * ROWS + s] = vec4(0.0);
#define INPUT_TEXEL(unused, s) a[s] = matmulInput(src[s], j, i);
// PAIRED_ROWS: x holds fp16 row pairs and every fragment's first row is even (Linear::run keeps the
// prompt rows so), so rows s and s + 1 come from one fetch: half the input fetches.
#define INPUT_PAIR(unused, s) { mat2x4 pair = matmulInputPair(src[s], j, i); a[s] = pair[0]; a[s + 1] = pair[1]; }
#define ACCUMULATE(p, s) acc[p * ROWS + s] += weightTimes(w, a[s]);
#define PART_BLOCK(unused, p) { mat4 w = weightBlock(i, PART_COLUMN(p), p); EACH_ROW(ACCUMULATE, p) }
#define FINISH_OUTPUT(p, s) acc[p * ROWS + s] = epilogue(acc[p * ROWS + s], c.x + s, PART_COLUMN(p));
#ifdef PAIRED_ROWS
#define INPUT_ROWS EACH_ROW_PAIR(INPUT_PAIR, 0)
#else
#define INPUT_ROWS EACH_ROW(INPUT_TEXEL, 0)
#endif
// Input texel j of the instance, times every part's weights.
#define TEXEL_STEP { \
    int i = matmulInstance() * INSTANCE_TEXELS + j; \
    vec4 a[ROWS]; \
    INPUT_ROWS EACH_PART(PART_BLOCK, 0) }
#define CONSTANT_TEXEL_STEP(J) { const int j = J; TEXEL_STEP }

void main() {
    ivec2 c = outputCoord();
    MatmulInput src[ROWS];
    EACH_ROW(START_ROW, 0)
    vec4 acc[OUTPUTS];
    EACH_OUTPUT(START_OUTPUT)
#ifdef TEXELS_WRITTEN_OUT
    // INSTANCE_TEXELS as a sum of powers of two, each run of steps after those above it.
#if INSTANCE_TEXELS >= 64
#error a written-out loop takes fewer than 64 input texels
#endif
#if (INSTANCE_TEXELS & 32) != 0
    TEXELS_32(CONSTANT_TEXEL_STEP, 0)
#endif
#if (INSTANCE_TEXELS & 16) != 0
    TEXELS_16(CONSTANT_TEXEL_STEP, (INSTANCE_TEXELS & 32))
#endif
#if (INSTANCE_TEXELS & 8) != 0
    TEXELS_8(CONSTANT_TEXEL_STEP, (INSTANCE_TEXELS & 48))
#endif
#if (INSTANCE_TEXELS & 4) != 0
    TEXELS_4(CONSTANT_TEXEL_STEP, (INSTANCE_TEXELS & 56))
#endif
#if (INSTANCE_TEXELS & 2) != 0
    TEXELS_2(CONSTANT_TEXEL_STEP, (INSTANCE_TEXELS & 60))
#endif
#if (INSTANCE_TEXELS & 1) != 0
    TEXELS_1(CONSTANT_TEXEL_STEP, (INSTANCE_TEXELS & 62))
#endif
#else
    for (int j = 0; j < INSTANCE_TEXELS; ++j) TEXEL_STEP
#endif
    EACH_OUTPUT(FINISH_OUTPUT)
    store(acc);
}
