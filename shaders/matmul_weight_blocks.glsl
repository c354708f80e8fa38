// Block-quantized weights (model/model_weights.h, BlockFormat): weight = code * scale + offset, with
// one scale and offset per BLOCK_TEXELS input texels and output column. Input (declared by the pass):
// u_w, the codes as int8 quads or 4-bit quads ([K, N], or [N, K] with TRANSPOSED_WEIGHT, the tied
// lm_head); u_w_scale and, with BLOCK_OFFSETS, u_w_offset: [K / (4 BLOCK_TEXELS), N] either way, so one
// fetch gives the four output columns of a block. Stands for matmul_weight(_transposed).glsl and the
// scales include both: the weights come out whole.
#include "fetch.glsl"

#ifdef u_w_nibbles
#define FETCH_CODES fetchNibbleRows
#else
#define FETCH_CODES fetchFourRows
#endif

// The scales and offsets of the block the loop is in, per output part: fetched when the loop enters a
// block, then reused for its BLOCK_TEXELS input texels (a fetch per block of codes, not per 4 x 4).
// Where every instance starts a block, the loop enters one at every BLOCK_TEXELS-th texel, a test the
// compiler resolves in the unrolled loop; else it compares block numbers as it goes, a branch per
// texel that made 4-bit decode steps slower (docs/benchmarks/journal.md, "4-bit weights scaled once
// per block").
#if PARTS == 1
int g_block[1] = int[1](-1);
#else
int g_block[3] = int[3](-1, -1, -1);
#endif
vec4 g_scale[PARTS], g_offset[PARTS];

void enterBlock(int i, int col, int part) {
    int b = i / BLOCK_TEXELS;
    if (INSTANCE_TEXELS % BLOCK_TEXELS == 0 ? i % BLOCK_TEXELS != 0 : b == g_block[part]) return;
    g_block[part] = b;
    g_scale[part] = fetch(u_w_scale, u_w_scale_layout, b, col);
#ifdef BLOCK_OFFSETS
    g_offset[part] = fetch(u_w_offset, u_w_offset_layout, b, col);
#else
    g_offset[part] = vec4(0.0);
#endif
}

#ifdef TRANSPOSED_WEIGHT
// The block's columns are four output rows (one scale each), its components four inputs.
mat4 weightBlock(int i, int col, int part) {
    mat4 q = FETCH_CODES(u_w, u_w_layout, col, i);
    enterBlock(i, col, part);
    vec4 s = g_scale[part], o = g_offset[part];
    return mat4(q[0] * s.x + o.x, q[1] * s.y + o.y, q[2] * s.z + o.z, q[3] * s.w + o.w);
}

vec4 weightTimes(mat4 block, vec4 a) { return a * block; }
#else
// The block's columns are four inputs, its components four output columns (one scale each).
mat4 weightBlock(int i, int col, int part) {
    mat4 q = FETCH_CODES(u_w, u_w_layout, i, col);
    enterBlock(i, col, part);
    vec4 s = g_scale[part], o = g_offset[part];
    return mat4(q[0] * s + o, q[1] * s + o, q[2] * s + o, q[3] * s + o);
}

vec4 weightTimes(mat4 block, vec4 a) { return block * a; }
#endif

vec4 weightScale(int col) { return vec4(1.0); }
