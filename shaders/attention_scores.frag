// scores[(q - pos0) * heads + h, key] = scale * dot(Q[q, head h], K[key, head h]), masked for key > q.
#include "common.glsl"
#include "attention.glsl"
// Inputs (declared by the pass): u_q; u_k, the layer's K cache (one row per position, heads side by side).

uniform float u_scale;

out vec4 o_scores;

void main() {
    ivec2 c = outputCoord();
    int queryPos = queryPosition(c.x);
    int key0 = 4 * c.y;
    if (key0 > queryPos) {
        o_scores = vec4(kMasked);
        return;
    }
    // Keys past the query are clamped to a valid cache row and masked afterwards.
    ivec4 keys = ivec4(key0) + ivec4(0, 1, 2, 3);
    ivec4 rows = min(keys, ivec4(queryPos));
    int base = headOf(c.x) * HEAD_TEXELS;
    vec4 d = vec4(0.0);
    for (int t = 0; t < HEAD_TEXELS; ++t) {
        vec4 q = fetch(u_q, u_q_layout, queryPos, base + t);
        d += vec4(dot(q, fetch(u_k, u_k_layout, rows.x, base + t)), dot(q, fetch(u_k, u_k_layout, rows.y, base + t)),
                  dot(q, fetch(u_k, u_k_layout, rows.z, base + t)), dot(q, fetch(u_k, u_k_layout, rows.w, base + t)));
    }
    o_scores = mix(d * u_scale, vec4(kMasked), vec4(greaterThan(keys, ivec4(queryPos))));
}
