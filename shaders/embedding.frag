// x[p] = wte[id[p]] + wpe[p] for the positions being rendered.
#include "common.glsl"
// Inputs (declared by the pass): u_ids, one row per position with the token id in .x; u_wte; u_wpe.

out vec4 o_value;

void main() {
    ivec2 c = outputCoord();
    int id = int(fetch(u_ids, u_ids_layout, c.x, 0).x);
    o_value = fetch(u_wte, u_wte_layout, id, c.y) + fetch(u_wpe, u_wpe_layout, c.x, c.y);
}
