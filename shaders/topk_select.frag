// Round u_rank of the top-k search, second level: the best of the block winners of logits row j,
// written as candidate u_rank of that row (texel u_first_column + j of the candidates texture's row
// u_rank; the texels of other columns keep what they hold).
#include "common.glsl"
#include "topk.glsl"
// Input (declared by the pass): u_blocks.

uniform int u_first_column;
uniform int u_logit_rows;

out vec4 o_candidate;

void main() {
    int row = outputCoord().y - u_first_column;
    if (row < 0 || row >= u_logit_rows) discard;
    vec2 best = kNone;
    for (int b = 0; b < u_blocks_layout.x; ++b) {
        vec2 candidate = fetch(u_blocks, u_blocks_layout, row, b).xy;
        if (comesBefore(candidate, best)) best = candidate;
    }
    o_candidate = vec4(best, 0.0, 0.0);
}
