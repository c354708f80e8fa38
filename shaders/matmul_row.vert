// The vertex shader of a one-row split-K matmul (matmul.frag with INPUT_FROM_VERTEX; decode steps on
// GPUs): instance s's triangle fetches input texels [s, s + 1) * SPLIT_TEXELS of the row once and
// hands them to its fragments as flat varyings, so the fragments fetch only weights. Those fetches
// are what a decode matmul is bound by on GPUs (cached input fetches cost about as much as weight
// fetches: docs/benchmarks.md), and the LayerNorm or activation of the input is computed once per
// instance instead of once per output texel.
#include "fetch.glsl"
#include "fullscreen.glsl"
#include "matmul_input.glsl"
// Inputs (declared by the pass): u_x, and those of matmul_input.glsl's options.

uniform ivec2 u_rows;  // [row, row + 1): the one output row
uniform int u_in_row_offset;

flat out int v_instance;
flat out vec4 v_input[SPLIT_TEXELS];

void main() {
    v_instance = gl_InstanceID;
    int row = u_rows.x + u_in_row_offset;
    vec2 normalization = inputRowNormalization(row);
    for (int j = 0; j < SPLIT_TEXELS; ++j) v_input[j] = inputTexel(row, gl_InstanceID * SPLIT_TEXELS + j, normalization);
    gl_Position = fullscreenTriangleCorner();
}
