// out[r, n] = epilogue( sum_k in[r + u_in_row_offset, k] * W[k, n] ), four output columns per
// fragment, into PARTS outputs (1, or 3 for the fused Q, K, V: part p reads W columns from
// p * u_part_texels). This file is the loop; its declaration (src/model/ops/matmul.cpp) composes
// the variant from includes placed before it, one of each kind:
//   input side  matmul_input_fragment.glsl (each fragment fetches x, through matmul_input_norm.glsl
//               or matmul_input_activation.glsl) or matmul_input_vertex.glsl (one row, from
//               matmul_row.vert): MatmulInput matmulInputRow(row), vec4 matmulInput(input, j, i)
//   K range     matmul_whole_k.glsl (one loop) or matmul_split_k.glsl (blended instances):
//               INSTANCE_TEXELS, matmulInstance()
//   weights     matmul_weight.glsl ([k, n]) or matmul_weight_transposed.glsl ([n, k], the tied
//               lm_head): vec4 weightTimes(a, i, col), whatever the texture's format
//   scales      matmul_weight_unscaled.glsl or matmul_weight_scale.glsl (int8 weights):
//               vec4 weightScale(col)
//   epilogue    matmul_epilogue.glsl: vec4 epilogue(acc, row, col), bias, activation, residual
#include "common.glsl"

uniform int u_part_texels;

layout(location = 0) out vec4 o_part0;
#if PARTS == 3
layout(location = 1) out vec4 o_part1;
layout(location = 2) out vec4 o_part2;
#endif

void main() {
    ivec2 c = outputCoord();
    MatmulInput src = matmulInputRow(c.x);
    vec4 acc[PARTS];
    for (int p = 0; p < PARTS; ++p) acc[p] = vec4(0.0);
    for (int j = 0; j < INSTANCE_TEXELS; ++j) {
        int i = matmulInstance() * INSTANCE_TEXELS + j;
        vec4 a = matmulInput(src, j, i);
        for (int p = 0; p < PARTS; ++p) acc[p] += weightTimes(a, i, c.y + p * u_part_texels);
    }
    o_part0 = epilogue(acc[0], c.x, c.y);
#if PARTS == 3
    o_part1 = epilogue(acc[1], c.x, c.y + u_part_texels);
    o_part2 = epilogue(acc[2], c.x, c.y + 2 * u_part_texels);
#endif
}
