// The codes of quantized weights, from a float matrix and the scales (and offsets) of
// quantize_block_params.frag (src/model/ops/quantize.h), found without a division: a code counts the
// steps its value reaches.
//  - 4-bit affine blocks: code = round((value - offset) / scale), 0..15: the steps (k + 1/2) scale,
//    k = 0..14, that value - offset reaches. A scale of 11 significant bits makes every step exact.
//  - SYMMETRIC int8: code = sign(value) round(|value| / scale), -127..127: the largest m <= 127 with
//    |value| >= (m - 1/2) scale, found by bisection. A scale of 16 significant bits makes every step
//    exact; a scale of 0 (a column of zeros) gives codes 0.
// value - offset is one correctly rounded subtraction, however a compiler computes it: every
// conformant GPU finds the same codes. Inputs (declared by the pass): u_w as that pass's,
// u_w_scale and, for affine blocks, u_w_offset. Output: the codes, four rows a texel (QUAD_OUTPUT):
// 4-bit quads (TexelFormat::Int4Quads) or, SYMMETRIC, int8 quads (Int8Quads; fetch.glsl).
#include "common.glsl"

#ifdef SYMMETRIC
out ivec4 o_codes;

// Four codes of one row as signed bytes, the first in the lowest.
int packRow(vec4 value, vec4 scale, vec4 offset) {
    vec4 magnitude = abs(value - offset);  // the offset is 0
    ivec4 q = ivec4(0);
    for (int bit = 64; bit > 0; bit >>= 1) {
        ivec4 m = q + bit;
        q += bit * ivec4(greaterThanEqual(magnitude, vec4(2 * m - 1) * (0.5 * scale)));
    }
    q = ivec4(sign(value)) * q * ivec4(greaterThan(scale, vec4(0.0)));
    return (q.x & 255) | ((q.y & 255) << 8) | ((q.z & 255) << 16) | ((q.w & 255) << 24);
}
#else
out uvec4 o_codes;

// Four codes of one row, the first in the lowest bits.
uint packRow(vec4 value, vec4 scale, vec4 offset) {
    vec4 above = value - offset;
    uvec4 q = uvec4(0u);
    for (int k = 0; k < 15; ++k) q += uvec4(greaterThanEqual(above, float(2 * k + 1) * (0.5 * scale)));
    return q.x | (q.y << 4u) | (q.z << 8u) | (q.w << 12u);
}
#endif

// The block's scales (and offsets) of four output columns.
void blockParams(int block, int texel, out vec4 s, out vec4 o) {
    s = fetch(u_w_scale, u_w_scale_layout, block, texel);
#ifdef SYMMETRIC
    o = vec4(0.0);
#else
    o = fetch(u_w_offset, u_w_offset_layout, block, texel);
#endif
}

void main() {
    ivec2 c = outputCoord();  // (quad of rows, texel)
    mat4 values = fetchFourRows(u_w, u_w_layout, c.x, c.y);
    vec4 s, o;
#ifdef TRANSPOSED_WEIGHT
    // Rows 4c.x .. are output columns, each with its own scale and offset; texel c.y is inputs.
    blockParams(c.y / BLOCK_TEXELS, c.x, s, o);
#define PARAMS(r) vec4(s[r]), vec4(o[r])
#else
    // Rows 4c.x .. are inputs of one block; texel c.y holds four output columns.
    blockParams(c.x / BLOCK_TEXELS, c.y, s, o);
#define PARAMS(r) s, o
#endif
#ifdef SYMMETRIC
    o_codes = ivec4(packRow(values[0], PARAMS(0)), packRow(values[1], PARAMS(1)), packRow(values[2], PARAMS(2)),
                    packRow(values[3], PARAMS(3)));
#else
    o_codes = uvec4(packRow(values[0], PARAMS(0)) | (packRow(values[1], PARAMS(1)) << 16u),
                    packRow(values[2], PARAMS(2)) | (packRow(values[3], PARAMS(3)) << 16u), 0u, 0u);
#endif
}
