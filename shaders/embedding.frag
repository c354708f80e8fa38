// x[p] = wte[id[p]] + wpe[p] for the positions being rendered.
#include "common.glsl"
// Inputs (declared by the pass): u_ids, one row per position with the token id in .x; u_wte; u_wpe;
// with WTE_SCALE (int8 wte) u_wte_scale, each row's scale; with WTE_BLOCK_TEXELS (block-quantized wte,
// matmul_weight_blocks.glsl) u_wte_scale and, with WTE_OFFSETS, u_wte_offset: [n_embd / block, rows].

out vec4 o_value;

vec4 tokenEmbedding(int id, int texel) {
#if defined(WTE_BLOCK_TEXELS)
    int block = texel / WTE_BLOCK_TEXELS;
#ifdef u_wte_nibbles
    vec4 codes = fetchNibbles(u_wte, u_wte_layout, id, texel);
#else
    vec4 codes = fetch(u_wte, u_wte_layout, id, texel);
#endif
#ifdef WTE_OFFSETS
    float offset = fetch(u_wte_offset, u_wte_offset_layout, block, id >> 2)[id & 3];
#else
    float offset = 0.0;
#endif
    return codes * fetch(u_wte_scale, u_wte_scale_layout, block, id >> 2)[id & 3] + offset;
#elif defined(WTE_SCALE)
    return fetch(u_wte, u_wte_layout, id, texel) * fetch(u_wte_scale, u_wte_scale_layout, 0, id >> 2)[id & 3];
#else
    return fetch(u_wte, u_wte_layout, id, texel);
#endif
}

void main() {
    ivec2 c = outputCoord();
    int id = int(fetch(u_ids, u_ids_layout, c.x, 0).x);
    o_value = tokenEmbedding(id, c.y) + fetch(u_wpe, u_wpe_layout, c.x, c.y);
}
