// The codes of a GGUF tensor's quantized blocks, decoded on the GPU from the file's bytes
// (src/model/ops/block_codes.h): the same codes as decodeCodes (src/format/ggml_type.cpp), in the
// layout the quantized matmuls read. The blocks' scales and offsets come from the CPU.
// Defines: the type, one of GGML_Q8_0, GGML_Q4_0, GGML_Q4_1, GGML_Q5_0, GGML_Q5_1, GGML_Q4_K,
// GGML_Q5_K, GGML_Q6_K, and BLOCK_BYTES, the bytes of one of its blocks; TRANSPOSED_WEIGHT where the
// engine's rows are the tensor's (its output channels: wte), not its inputs. Input (declared by the
// pass): u_blocks, the bytes of tensor rows u_first_output onwards, one after another, as a stream of
// RG32UI texels (TexelFormat::Bits, eight bytes a texel, the first in the lowest bits). Output:
// 4-bit quads (Int4Quads) for the 4-bit types, int8 quads (Int8Quads) for the others (QUAD_OUTPUT;
// fetch.glsl).
#include "common.glsl"

uniform int u_row_bytes;     // bytes of one tensor row (K values)
uniform int u_first_output;  // the tensor row that the stream starts with
uniform int u_end_output;    // outputs [u_first_output, u_end_output) are written by this run
uniform int u_outputs;       // tensor rows; padding channels past them get codes 0

#if defined(GGML_Q4_0) || defined(GGML_Q4_1) || defined(GGML_Q4_K)
#define NIBBLES 1
out uvec4 o_codes;
#else
out ivec4 o_codes;
#endif

// Word w (four bytes, the first in the lowest bits) of the stream.
uint word(int w) {
    int texel = w >> 1;
    ivec3 at = texelAddress(u_blocks_layout, texel / u_blocks_layout.x, texel % u_blocks_layout.x);
    uvec2 u = texelFetch(u_blocks, at, 0).xy;
    return (w & 1) == 0 ? u.x : u.y;
}

// Bytes b .. b + 3 of the stream, the first in the lowest bits: blocks are not 4-byte aligned.
uint bytes4(int b) {
    uint s = uint(8 * (b & 3));
    uint low = word(b >> 2);
    return s == 0u ? low : (low >> s) | (word((b >> 2) + 1) << (32u - s));
}

ivec4 bytesOf(uint u) { return ivec4((uvec4(u) >> uvec4(0u, 8u, 16u, 24u)) & 255u); }

// The low nibbles, or (`high`) the high ones, of bytes b .. b + 3.
ivec4 nibblesAt(int b, bool high) { return bytesOf(bytes4(b) >> (high ? 4u : 0u)) & 15; }

// The codes of inputs k .. k + 3 (k a multiple of 4: one block holds them) of the tensor row that
// starts at byte `row` of the stream, each type's layout as the GGUF specification gives it.
ivec4 codes(int row, int k) {
#if defined(GGML_Q8_0)
    // d, then 32 signed bytes.
    return (bytesOf(bytes4(row + BLOCK_BYTES * (k >> 5) + 2 + (k & 31))) << 24) >> 24;
#elif defined(GGML_Q4_0) || defined(GGML_Q4_1) || defined(GGML_Q5_0) || defined(GGML_Q5_1)
    // d (and m), then for 5 bits 32 high bits, then 16 bytes: value j in the low nibble of byte j,
    // value j + 16 in its high nibble.
#if defined(GGML_Q4_0)
    const int kQs = 2;
#elif defined(GGML_Q4_1)
    const int kQs = 4;
#elif defined(GGML_Q5_0)
    const int kQs = 6;
#else
    const int kQs = 8;
#endif
    int j = k & 31, block = row + BLOCK_BYTES * (k >> 5);
    ivec4 low = nibblesAt(block + kQs + (j & 15), j >= 16);
#if defined(GGML_Q5_0) || defined(GGML_Q5_1)
    ivec4 high = ivec4((uvec4(bytes4(block + kQs - 4)) >> uvec4(j, j + 1, j + 2, j + 3)) & 1u);
#if defined(GGML_Q5_0)
    return (low | (high << 4)) - 16;
#else
    return low | (high << 4);
#endif
#else
    return low;
#endif
#elif defined(GGML_Q4_K) || defined(GGML_Q5_K)
    // d, dmin, 12 bytes of scales, (5 bits: 32 bytes of high bits,) 128 bytes: value 64c + l in the
    // low nibble of byte 32c + l, value 64c + 32 + l in its high nibble; its high bit is bit 2c (or
    // 2c + 1) of high byte l.
#if defined(GGML_Q4_K)
    const int kQs = 16;
#else
    const int kQs = 48;
#endif
    int i = k & 255, chunk = i >> 6, second = (i >> 5) & 1, l = i & 31, block = row + BLOCK_BYTES * (k >> 8);
    ivec4 low = nibblesAt(block + kQs + 32 * chunk + l, second == 1);
#if defined(GGML_Q5_K)
    return low | (((bytesOf(bytes4(block + 16 + l)) >> (2 * chunk + second)) & 1) << 4);
#else
    return low;
#endif
#elif defined(GGML_Q6_K)
    // 128 bytes of low nibbles, 64 of high bit pairs, 16 scales, d. Each half h of the super-block:
    // value 32p + l (p = 0..3) in nibble p / 2 of low byte 64h + 32 (p % 2) + l, and bits 2p of high
    // byte 32h + l.
    int i = k & 255, h = i >> 7, p = (i >> 5) & 3, l = i & 31, block = row + BLOCK_BYTES * (k >> 8);
    ivec4 low = nibblesAt(block + 64 * h + 32 * (p & 1) + l, p >= 2);
    ivec4 high = (bytesOf(bytes4(block + 128 + 32 * h + l)) >> (2 * p)) & 3;
    return (low | (high << 4)) - 32;
#endif
}

#ifdef NIBBLES
// A row's four codes 0..15 in 16 bits, the first in the lowest.
uint packRow(ivec4 r) {
    uvec4 u = uvec4(r) << uvec4(0u, 4u, 8u, 12u);
    return u.x | u.y | u.z | u.w;
}
#else
// A row's four codes as signed bytes, the first in the lowest.
int packRow(ivec4 r) {
    ivec4 b = (r & 255) << ivec4(0, 8, 16, 24);
    return b.x | b.y | b.z | b.w;
}
#endif

void main() {
    ivec2 c = outputCoord();  // (quad of rows, texel)
#ifdef TRANSPOSED_WEIGHT
    int first = 4 * c.x, k = 4 * c.y;  // rows are outputs, the texel four inputs
#else
    int first = 4 * c.y, k = 4 * c.x;  // rows are inputs, the texel four outputs
#endif
    if (first < u_first_output || first >= u_end_output) discard;  // another run's outputs
    ivec4 byOutput[4];  // the codes of outputs first .. first + 3 at inputs k .. k + 3
    for (int o = 0; o < 4; ++o)
        byOutput[o] = first + o < u_outputs ? codes((first + o - u_first_output) * u_row_bytes, k) : ivec4(0);
    ivec4 rows[4];  // the codes of the texel's four rows
    for (int r = 0; r < 4; ++r)
#ifdef TRANSPOSED_WEIGHT
        rows[r] = byOutput[r];
#else
        rows[r] = ivec4(byOutput[0][r], byOutput[1][r], byOutput[2][r], byOutput[3][r]);
#endif
#ifdef NIBBLES
    o_codes = uvec4(packRow(rows[0]) | (packRow(rows[1]) << 16u), packRow(rows[2]) | (packRow(rows[3]) << 16u), 0u, 0u);
#else
    o_codes = ivec4(packRow(rows[0]), packRow(rows[1]), packRow(rows[2]), packRow(rows[3]));
#endif
}
