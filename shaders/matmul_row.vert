// The vertex shader of a one-row split-K matmul (matmul.frag with matmul_input_vertex.glsl; decode
// steps on GPUs): instance s's triangle fetches input texels [s, s + 1) * SPLIT_TEXELS of the row once
// and hands them to its fragments as flat varyings, so the fragments fetch only weights, and the
// LayerNorm or activation of the input (matmul_input_norm.glsl or matmul_input_activation.glsl,
// included before this) is computed once per instance instead of once per output texel.
// Instances blend into the output row, or with INSTANCE_ROWS each draws its own row of partial sums
// (Pass::instancePerRow): a quad over that row's lines instead of the fullscreen triangle.
#include "fetch.glsl"
#include "fullscreen.glsl"

// [row, row + 1): the one output row; with INSTANCE_ROWS [first, first + instances), instance s
// writing row first + s, and u_in_row_offset the input row itself.
uniform ivec2 u_rows;
uniform int u_in_row_offset;

#ifdef INSTANCE_ROWS
uniform ivec4 u_out_layout;

// Corner gl_VertexID (of 6: two triangles) of the quad over the lines of output row `row`, whose
// rows are whole lines of one page.
vec4 rowQuadCorner(int row) {
    int v = gl_VertexID;
    vec2 corner = vec2(float(v == 1 || v == 3 || v == 4), float(v == 2 || v == 4 || v == 5));
    float lines = float(max(u_out_layout.x / u_out_layout.y, 1));
    float y = float(texelAddress(u_out_layout, row, 0).y) + corner.y * lines;
    return vec4(corner.x * 2.0 - 1.0, y / float(u_out_layout.z) * 2.0 - 1.0, 0.0, 1.0);
}
#endif

flat out int v_instance;
flat out vec4 v_input[SPLIT_TEXELS];

void main() {
    v_instance = gl_InstanceID;
#ifdef INSTANCE_ROWS
    int row = u_in_row_offset;
#else
    int row = u_rows.x + u_in_row_offset;
#endif
    vec2 normalization = inputRowNormalization(row);
    for (int j = 0; j < SPLIT_TEXELS; ++j) v_input[j] = inputTexel(row, gl_InstanceID * SPLIT_TEXELS + j, normalization);
#ifdef INSTANCE_ROWS
    gl_Position = rowQuadCorner(u_rows.x + gl_InstanceID);
#else
    gl_Position = fullscreenTriangleCorner();
#endif
}
