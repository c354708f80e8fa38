// Shared by every fragment shader: `fetch` (fetch.glsl) and the output coordinate.
#include "fetch.glsl"

// The output's layout stays a uniform: it is used once per fragment.
uniform ivec4 u_out_layout;
uniform int u_out_page;
uniform ivec2 u_rows;  // the output rows [begin, end) this draw renders

// The logical (row, texel) this fragment writes. Lines can hold rows outside the range being
// rendered (folded layouts); those fragments are discarded so their texels keep their contents.
ivec2 outputCoord() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    int linear = (u_out_page * u_out_layout.z + p.y) * u_out_layout.y + p.x;
    int row = linear / u_out_layout.x;
    if (row < u_rows.x || row >= u_rows.y) discard;
    return ivec2(row, linear - row * u_out_layout.x);
}
