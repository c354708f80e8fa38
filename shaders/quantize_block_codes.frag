// The 4-bit codes of affine blocks quantized from a float matrix (weights 'int4'; src/model/ops/quantize.h):
// code = round((value - offset) / scale), 0..15, with the scales and offsets of
// quantize_block_params.frag, found without a division: the code counts the steps (k + 1/2) scale,
// k = 0..14, that value - offset reaches. A scale of 11 significant bits makes every step exact,
// however a compiler computes them, and value - offset is one correctly rounded subtraction: every
// conformant GPU finds the same codes. Inputs (declared by the pass): u_w as that pass's, u_w_scale,
// u_w_offset. Output: the codes as 4-bit quads (QUAD_OUTPUT; TexelFormat::Int4Quads, fetch.glsl).
#include "common.glsl"

out uvec4 o_codes;

// Four codes of one row, the first in the lowest bits.
uint packRow(vec4 value, vec4 scale, vec4 offset) {
    vec4 above = value - offset;
    uvec4 q = uvec4(0u);
    for (int k = 0; k < 15; ++k) q += uvec4(greaterThanEqual(above, float(2 * k + 1) * (0.5 * scale)));
    return q.x | (q.y << 4u) | (q.z << 8u) | (q.w << 12u);
}

void main() {
    ivec2 c = outputCoord();  // (quad of rows, texel)
    uint row[4];
#ifdef TRANSPOSED_WEIGHT
    // Rows 4c.x .. are output columns, each with its own scale and offset; texel c.y is inputs.
    mat4 values = fetchFourRows(u_w, u_w_layout, c.x, c.y);
    int block = c.y / BLOCK_TEXELS;
    vec4 s = fetch(u_w_scale, u_w_scale_layout, block, c.x), o = fetch(u_w_offset, u_w_offset_layout, block, c.x);
    for (int r = 0; r < 4; ++r) row[r] = packRow(values[r], vec4(s[r]), vec4(o[r]));
#else
    // Rows 4c.x .. are inputs of one block; texel c.y holds four output columns.
    mat4 values = fetchFourRows(u_w, u_w_layout, c.x, c.y);
    int block = c.x / BLOCK_TEXELS;
    vec4 s = fetch(u_w_scale, u_w_scale_layout, block, c.y), o = fetch(u_w_offset, u_w_offset_layout, block, c.y);
    for (int r = 0; r < 4; ++r) row[r] = packRow(values[r], s, o);
#endif
    o_codes = uvec4(row[0] | (row[1] << 16u), row[2] | (row[3] << 16u), 0u, 0u);
}
