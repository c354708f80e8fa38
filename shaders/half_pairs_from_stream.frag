// A matrix as fp16 row pairs (TexelFormat::HalfPairs; PAIR_OUTPUT), from its fp16 or fp32 values: how
// fp16 weights are made from a checkpoint's bytes, uploaded as they are (ModelWeights::uploadStream).
// Input (declared by the pass): u_x, rows u_first_row onwards of the matrix (it arrives a few MB at a
// time), as fp16 bits (TexelFormat::Bits: u_x_bits), which are paired as they are, or as
// RGBA32F. An fp32 value is rounded to the nearest fp16, ties to even, in integer arithmetic as
// floatToHalf (src/util/half.h) does it, and written as bits: the GPU's own float -> half conversions
// (packHalf2x16, a render target) round and flush subnormals as the implementation likes. So every
// conformant GPU stores the values the CPU would.
#include "common.glsl"

uniform int u_first_row;
out uvec4 o_pair;

// The fp16 bits nearest to v (never NaN or Inf: the CPU refused those).
uint halfBits(float v) {
    uint x = floatBitsToUint(v);
    uint sign = (x >> 16) & 0x8000u, mantissa = x & 0x7FFFFFu;
    int e = int((x >> 23) & 0xFFu) - 127 + 15;
    if (e >= 31) return sign | 0x7C00u;  // too large: Inf
    // Normal: 10 of the 23 mantissa bits stay; subnormal: the significand shifts right further.
    int shift = e > 0 ? 13 : 14 - e;
    if (shift > 24) return sign;
    uint significand = e > 0 ? mantissa : (mantissa | 0x800000u);
    uint bits = (e > 0 ? uint(e) << 10 : 0u) | (significand >> uint(shift));
    uint rest = significand & ((1u << uint(shift)) - 1u), halfway = 1u << uint(shift - 1);
    if (rest > halfway || (rest == halfway && (bits & 1u) == 1u)) ++bits;  // a carry may reach Inf
    return sign | bits;
}

// Two of a row's values, the first in the low bits (as packHalf2x16 orders them).
uint halfBits(float low, float high) { return halfBits(low) | (halfBits(high) << 16u); }

void main() {
    ivec2 c = outputCoord();  // (pair, texel)
    int row = 2 * c.x - u_first_row;
#ifdef u_x_bits
    uvec2 even = texelFetch(u_x, texelAddress(u_x_layout, row, c.y), 0).xy;
    uvec2 odd = texelFetch(u_x, texelAddress(u_x_layout, row + 1, c.y), 0).xy;
    o_pair = uvec4(even, odd);
#else
    vec4 even = fetch(u_x, u_x_layout, row, c.y), odd = fetch(u_x, u_x_layout, row + 1, c.y);
    o_pair = uvec4(halfBits(even.x, even.y), halfBits(even.z, even.w), halfBits(odd.x, odd.y), halfBits(odd.z, odd.w));
#endif
}
