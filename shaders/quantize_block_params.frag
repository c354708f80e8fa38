// The scales and offsets of 4-bit affine blocks quantized from a float matrix (weights 'int4';
// src/model/ops/quantize.h): for each block of BLOCK_TEXELS input texels and output column, offset =
// the block's least value and scale = (largest - least) / 15 with its last 13 bits of mantissa
// cleared, so that its codes 0..15 (quantize_block_codes.frag) span it. Every step is exact or
// correctly rounded (no division: GLSL's may be off by 2.5 ulp), so every conformant GPU and the
// CPU reference of tests/model/int4_weights_test.cpp find the same scales and codes. Input (declared by the pass): u_w, the matrix as floats, [K, N]
// or, with TRANSPOSED_WEIGHT, [N, K] (the tied lm_head). Output 0: scales, output 1: offsets, both
// [K / (4 BLOCK_TEXELS), N] (matmul_weight_blocks.glsl).
#include "common.glsl"

#define OUTPUTS 2
#include "outputs.glsl"

void main() {
    ivec2 c = outputCoord();  // (block, output texel)
    vec4 lo = vec4(3.0e38), hi = vec4(-3.0e38);
    for (int j = 0; j < BLOCK_TEXELS; ++j) {
#ifdef TRANSPOSED_WEIGHT
        // Output column 4c.y + r is row 4c.y + r, its block texels c.x * BLOCK_TEXELS + j.
        mat4 rows = fetchFourRows(u_w, u_w_layout, c.y, c.x * BLOCK_TEXELS + j);
        vec4 least = vec4(0.0), most = vec4(0.0);
        for (int r = 0; r < 4; ++r) {
            least[r] = min(min(rows[r].x, rows[r].y), min(rows[r].z, rows[r].w));
            most[r] = max(max(rows[r].x, rows[r].y), max(rows[r].z, rows[r].w));
        }
        lo = min(lo, least);
        hi = max(hi, most);
#else
        // Inputs 4j .. 4j + 3 of the block are rows; texel c.y holds the four output columns.
        mat4 rows = fetchFourRows(u_w, u_w_layout, c.x * BLOCK_TEXELS + j, c.y);
        for (int r = 0; r < 4; ++r) {
            lo = min(lo, rows[r]);
            hi = max(hi, rows[r]);
        }
#endif
    }
    // 1/15 as the nearest float, written as its bits so that no compiler folds it another way.
    vec4 scale = (hi - lo) * uintBitsToFloat(0x3D888889u);
    vec4 result[2];
    result[0] = uintBitsToFloat(floatBitsToUint(scale) & 0xFFFFE000u);
    result[1] = lo;
    store(result);
}
