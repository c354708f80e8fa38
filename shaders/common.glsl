// Shared by every fragment shader: `fetch` (fetch.glsl) and the output coordinate.
#include "fetch.glsl"

// The largest of a texel's four lanes.
float maxLane(vec4 v) { return max(max(v.x, v.y), max(v.z, v.w)); }

// The output's layout stays a uniform: it is used once per fragment.
uniform ivec4 u_out_layout;
uniform int u_out_page;
uniform ivec2 u_rows;  // the output rows [begin, end) this draw renders (of the matrix, not of its pairs)

// An output of fp16 row pairs (PAIR_OUTPUT, which the Pass defines for one; row_output.glsl): each
// stored texel holds two rows.
// An output of 4-bit or int8 quads (QUAD_OUTPUT; quantize_block_codes.frag) holds four rows a texel.
#ifdef PAIR_OUTPUT
#define OUTPUT_ROWS_PER_TEXEL 2
#elif defined(QUAD_OUTPUT)
#define OUTPUT_ROWS_PER_TEXEL 4
#else
#define OUTPUT_ROWS_PER_TEXEL 1
#endif

// The stored (row, texel) this fragment writes (on page u_out_page; with interleaved rows, a pass
// that writes a group of rows through several render targets gets the first; for row pairs, the
// pair). Lines can hold rows outside the range being rendered (folded layouts); those fragments are
// discarded so their texels keep their contents.
ivec2 outputCoord() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    int k = interleaveShift(u_out_layout);
    int linear = ((u_out_page >> k) * u_out_layout.z + p.y) * u_out_layout.y + p.x;
    int groupRow = linear / u_out_layout.x;
    int row = (groupRow << k) + (u_out_page & ((1 << k) - 1));
    if ((row + 1) * OUTPUT_ROWS_PER_TEXEL <= u_rows.x || row * OUTPUT_ROWS_PER_TEXEL >= u_rows.y) discard;
    return ivec2(row, linear - groupRow * u_out_layout.x);
}
