// The scales (and offsets) of quantized weights, from a float matrix (src/model/ops/quantize.h), for
// each block of BLOCK_TEXELS input texels and output column:
//  - 4-bit affine blocks (weights 'int4'): offset = the block's least value, scale = (largest -
//    least) / 15 with its last 13 bits of mantissa cleared, so that codes 0..15 span it;
//  - SYMMETRIC int8 (weights 'int8', one block the whole column): scale = the largest |value| / 127
//    with its last 8 bits of mantissa cleared, for codes -127..127 and no offset.
// Every step is exact or correctly rounded (no division: GLSL's may be off by 2.5 ulp), and the
// cleared bits make every step of quantize_block_codes.frag exact, so every conformant GPU and the
// CPU references (quantizeInt8, tests/model/int4_weights_test.cpp) find the same scales and codes.
// Input (declared by the pass): u_w, the matrix as floats, [K, N] or, with TRANSPOSED_WEIGHT, [N, K]
// (the tied lm_head). Output 0: scales, output 1 (affine blocks): offsets, both
// [K / (4 BLOCK_TEXELS), N] (matmul_weight_blocks.glsl, matmul_weight_scale.glsl).
#include "common.glsl"

#ifdef SYMMETRIC
#define OUTPUTS 1
#else
#define OUTPUTS 2
#endif
#include "outputs.glsl"

// A float's last `bits` bits of mantissa cleared.
vec4 truncated(vec4 scale, uint bits) { return uintBitsToFloat(floatBitsToUint(scale) & ~((1u << bits) - 1u)); }

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
            most[r] = maxLane(rows[r]);
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
    vec4 result[OUTPUTS];
    // 1/127 and 1/15 as the nearest floats, written as their bits so that no compiler folds them
    // another way.
#ifdef SYMMETRIC
    result[0] = truncated(max(hi, -lo) * uintBitsToFloat(0x3C010204u), 8u);
#else
    result[0] = truncated((hi - lo) * uintBitsToFloat(0x3D888889u), 13u);
    result[1] = lo;
#endif
    store(result);
}
