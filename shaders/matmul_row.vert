// The vertex shader of a one-row split-K matmul (matmul.frag with matmul_input_vertex.glsl; decode
// steps on GPUs): instance s's triangle fetches input texels [s, s + 1) * SPLIT_TEXELS of the row once
// and hands them to its fragments as flat varyings, so the fragments fetch only weights, and the
// LayerNorm or activation of the input (matmul_input_norm.glsl or matmul_input_activation.glsl,
// included before this) is computed once per instance instead of once per output texel.
#include "fetch.glsl"
#include "fullscreen.glsl"

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
