// The tokens of the sequence, for the repetition penalty: texel t, lane j is 1.0 where token 4t + j
// is among ids[u_from, u_to), or was before (u_from > 0: as u_before says). One row of vocabulary
// texels; the caller copies it back over u_before.
#include "common.glsl"
// Inputs (declared by the pass): u_ids, one token id per row in .x; u_before.

uniform int u_from;
uniform int u_to;

out vec4 o_seen;

void main() {
    int texel = outputCoord().y;
    vec4 seen = u_from > 0 ? fetch(u_before, u_before_layout, 0, texel) : vec4(0.0);
    for (int p = u_from; p < u_to; ++p) {
        int id = int(fetch(u_ids, u_ids_layout, p, 0).x);
        if ((id >> 2) == texel) seen[id & 3] = 1.0;
    }
    o_seen = seen;
}
