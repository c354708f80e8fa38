// x[p] = wte[id[p]] + wpe[p] for the positions being rendered.
#include "common.glsl"
// Inputs (declared by the pass): u_ids, one row per position with the token id in .x; u_wte; u_wpe;
// with WTE_SCALE (int8 wte) u_wte_scale, each row's scale.

out vec4 o_value;

void main() {
    ivec2 c = outputCoord();
    int id = int(fetch(u_ids, u_ids_layout, c.x, 0).x);
#ifdef WTE_SCALE
    float scale = fetch(u_wte_scale, u_wte_scale_layout, 0, id >> 2)[id & 3];
#else
    float scale = 1.0;
#endif
    o_value = fetch(u_wte, u_wte_layout, id, c.y) * scale + fetch(u_wpe, u_wpe_layout, c.x, c.y);
}
