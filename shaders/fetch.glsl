// Shared by every shader, vertex or fragment: precision, and `fetch`, the one place that knows how a
// logical matrix (row, texel) is laid out in a 2D array texture (src/gl/tensor_layout.h).
precision highp float;
precision highp int;
precision highp sampler2DArray;
precision highp usampler2DArray;
precision highp isampler2DArray;

// Every input is declared by its Pass (src/gl/pass.cpp) before this file: a sampler NAME
// (`sampler2DArray`, or `usampler2DArray` for fp16 row pairs) and its layout compiled in as the
// constant NAME_layout = (texelsPerRow, width, height, mode): mode 1 unfolded, -s one page of width
// 2^s, 32 + s one row per line in pages of 2^s lines, 0 anything else, plus 128 k for rows
// interleaved over groups of 2^k pages (src/gl/tensor_layout.h). As constants, `fetch` folds to the
// arithmetic of that one mode: software renderers run every branch of a uniform-dependent `if`, and
// divide lane by lane.

// k of rows interleaved over groups of 2^k pages (TensorLayout::interleave), and the mode without it.
int interleaveShift(ivec4 L) { return (L.w + 64) >> 7; }
ivec4 groupLayout(ivec4 L) { return ivec4(L.xyz, L.w - (interleaveShift(L) << 7)); }

// Where texel `texel` of row `row` lies in the layout of one page group: (x, y, page).
ivec3 groupAddress(ivec4 L, int row, int texel) {
    if (L.w == 1) return ivec3(texel, row, 0);
    int linear = row * L.x + texel;
    if (L.w < 0) return ivec3(linear & (L.y - 1), linear >> -L.w, 0);
    if (L.w >= 32) return ivec3(texel, row & (L.z - 1), row >> (L.w - 32));
    int pageTexels = L.y * L.z;
    int page = linear / pageTexels;
    int inPage = linear - page * pageTexels;
    int y = inPage / L.y;
    return ivec3(inPage - y * L.y, y, page);
}

// Where texel `texel` of row `row` lies: (x, y, page).
ivec3 texelAddress(ivec4 L, int row, int texel) {
    int k = interleaveShift(L);
    ivec3 a = groupAddress(groupLayout(L), row >> k, texel);
    return ivec3(a.xy, (a.z << k) + (row & ((1 << k) - 1)));
}

vec4 fetch(highp sampler2DArray t, ivec4 L, int row, int texel) { return texelFetch(t, texelAddress(L, row, texel), 0); }

// fp16 row pairs (TexelFormat::HalfPairs): texel (p, t) holds texel t of rows 2p and 2p + 1 (.xy
// and .zw, two halves per channel), and L is the layout of the pairs.
vec4 halves(uvec2 h) { return vec4(unpackHalf2x16(h.x), unpackHalf2x16(h.y)); }

// Texel `texel` of rows 2p and 2p + 1 (`pair` p), from one fetch: the matrix's two columns.
mat2x4 fetchPair(highp usampler2DArray t, ivec4 L, int pair, int texel) {
    uvec4 u = texelFetch(t, texelAddress(L, pair, texel), 0);
    return mat2x4(halves(u.xy), halves(u.zw));
}

// The texel of a row pair that holds texel t of rows 2p (`even`) and 2p + 1 (`odd`), for passes that
// write row pairs (row_output.glsl).
uvec4 halfPair(vec4 even, vec4 odd) {
    return uvec4(packHalf2x16(even.xy), packHalf2x16(even.zw), packHalf2x16(odd.xy), packHalf2x16(odd.zw));
}

vec4 fetch(highp usampler2DArray t, ivec4 L, int row, int texel) {
    uvec4 u = texelFetch(t, texelAddress(L, row >> 1, texel), 0);
    return halves((row & 1) == 0 ? u.xy : u.zw);
}

// Rows 4q .. 4q + 3 at one texel, as the columns of a matrix: M * a sums the rows weighted by a, and
// a * M is their dot products with a. Row pairs take two fetches where other formats take four.
mat4 fetchFourRows(highp sampler2DArray t, ivec4 L, int q, int texel) {
    return mat4(fetch(t, L, 4 * q, texel), fetch(t, L, 4 * q + 1, texel), fetch(t, L, 4 * q + 2, texel),
                fetch(t, L, 4 * q + 3, texel));
}

mat4 fetchFourRows(highp usampler2DArray t, ivec4 L, int q, int texel) {
    mat2x4 a = fetchPair(t, L, 2 * q, texel), b = fetchPair(t, L, 2 * q + 1, texel);
    return mat4(a[0], a[1], b[0], b[1]);
}

// int8 quads (TexelFormat::Int8Quads): channel c of texel (q, t) holds texel t of row 4q + c as four
// signed bytes, the first in the lowest. These return the integers; the owner of the texture
// multiplies by each output channel's scale (matmul_weight_scale.glsl, embedding.frag).
vec4 signedBytes(int bytes) { return vec4((ivec4(bytes) << ivec4(24, 16, 8, 0)) >> 24); }

vec4 fetch(highp isampler2DArray t, ivec4 L, int row, int texel) {
    return signedBytes(texelFetch(t, texelAddress(L, row >> 2, texel), 0)[row & 3]);
}

mat4 fetchFourRows(highp isampler2DArray t, ivec4 L, int q, int texel) {
    ivec4 v = texelFetch(t, texelAddress(L, q, texel), 0);
    return mat4(signedBytes(v.x), signedBytes(v.y), signedBytes(v.z), signedBytes(v.w));
}

// 4-bit quads (TexelFormat::Int4Quads; a pass declares NAME_nibbles for such an input): .x of texel
// (q, t) holds texel t of rows 4q (low 16 bits) and 4q + 1, .y of rows 4q + 2 and 4q + 3, four 4-bit
// codes a row, the first in the lowest bits. These return the codes; the owner of the texture turns
// them into weights with the block's scale and offset (matmul_weight_blocks.glsl, embedding.frag).
#ifdef HALF_NIBBLES
// Code n of both rows of a uint, (first row's, second row's): ORed into the mantissa of the half
// 1024, whose unit is 1, and unpacked as halves (Tuning::halfNibbles).
vec2 codePair(uint bits, uint n) {
    return unpackHalf2x16(((bits >> (4u * n)) & 0x000F000Fu) | 0x64006400u) - 1024.0;
}

// The codes of both rows of a uint, as the matrix's columns 0 and 1.
mat2x4 nibbleRows(uint bits) {
    vec2 c0 = codePair(bits, 0u), c1 = codePair(bits, 1u), c2 = codePair(bits, 2u), c3 = codePair(bits, 3u);
    return mat2x4(c0.x, c1.x, c2.x, c3.x, c0.y, c1.y, c2.y, c3.y);
}
#else
vec4 nibbles(uint bits) { return vec4((uvec4(bits) >> uvec4(0u, 4u, 8u, 12u)) & 15u); }

mat2x4 nibbleRows(uint bits) { return mat2x4(nibbles(bits), nibbles(bits >> 16u)); }
#endif

mat4 fetchNibbleRows(highp usampler2DArray t, ivec4 L, int q, int texel) {
    uvec2 u = texelFetch(t, texelAddress(L, q, texel), 0).xy;
    mat2x4 a = nibbleRows(u.x), b = nibbleRows(u.y);
    return mat4(a[0], a[1], b[0], b[1]);
}

vec4 fetchNibbles(highp usampler2DArray t, ivec4 L, int row, int texel) {
    uvec2 u = texelFetch(t, texelAddress(L, row >> 2, texel), 0).xy;
    return nibbleRows((row & 2) == 0 ? u.x : u.y)[row & 1];
}
