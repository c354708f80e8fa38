// out[r, n] = epilogue( sum_k in[r + u_in_row_offset, k] * W[k, n] ), four output columns per
// fragment, into PARTS outputs (1, or 3 for the fused Q, K, V: part p reads W columns from
// (u_first_part + p) * u_part_texels; a pass per part sets u_first_part), for ROWS consecutive rows
// (> 1: register tiling, Pass::writeRowGroups; each weight fetch then serves ROWS rows). This file is
// the loop; its declaration (src/model/ops/matmul.cpp) composes the variant from includes placed
// before it, one of each kind:
//   input side  matmul_input_fragment.glsl (each fragment fetches x, through matmul_input_norm.glsl
//               or matmul_input_activation.glsl) or matmul_input_vertex.glsl (one row, from
//               matmul_row.vert): MatmulInput matmulInputRow(row), vec4 matmulInput(input, j, i)
//   K range     matmul_whole_k.glsl (one loop) or matmul_split_k.glsl (blended instances):
//               INSTANCE_TEXELS, matmulInstance()
//   weights     matmul_weight.glsl ([k, n]) or matmul_weight_transposed.glsl ([n, k], the tied
//               lm_head): mat4 weightBlock(i, col), whatever the texture's format, and
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

void main() {
    ivec2 c = outputCoord();
    MatmulInput src[ROWS];
    for (int s = 0; s < ROWS; ++s) src[s] = matmulInputRow(c.x + s);
    vec4 acc[OUTPUTS];
    for (int n = 0; n < OUTPUTS; ++n) acc[n] = vec4(0.0);
    for (int j = 0; j < INSTANCE_TEXELS; ++j) {
        int i = matmulInstance() * INSTANCE_TEXELS + j;
        vec4 a[ROWS];
        for (int s = 0; s < ROWS; ++s) a[s] = matmulInput(src[s], j, i);
        for (int p = 0; p < PARTS; ++p) {
            mat4 w = weightBlock(i, c.y + (u_first_part + p) * u_part_texels);
            for (int s = 0; s < ROWS; ++s) acc[p * ROWS + s] += weightTimes(w, a[s]);
        }
    }
    for (int p = 0; p < PARTS; ++p)
        for (int s = 0; s < ROWS; ++s)
            acc[p * ROWS + s] = epilogue(acc[p * ROWS + s], c.x + s, c.y + (u_first_part + p) * u_part_texels);
    store(acc);
}
