// Round u_rank of the top-k search, second level: the best of the block winners, written as
// candidate u_rank (one texel of the candidates texture).
#include "common.glsl"
#include "topk.glsl"
// Input (declared by the pass): u_blocks.

out vec4 o_candidate;

void main() {
    outputCoord();
    vec2 best = kNone;
    for (int b = 0; b < u_blocks_layout.x; ++b) {
        vec2 candidate = fetch(u_blocks, u_blocks_layout, 0, b).xy;
        if (comesBefore(candidate, best)) best = candidate;
    }
    o_candidate = vec4(best, 0.0, 0.0);
}
