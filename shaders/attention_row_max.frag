// The largest unmasked score of each scores row, once per row for attention_apply.frag (ROW_MAX),
// whose fragments would otherwise each find it again for every texel of the head they write.
#include "common.glsl"
#include "attention.glsl"
// Input (declared by the pass): u_scores.

out vec4 o_max;

void main() {
    ivec2 c = outputCoord();
    int head = c.x / u_stride;
    int query = min(u_pos0 + c.x - head * u_stride, lastQuery());
    o_max = vec4(rowMax(u_scores, u_scores_layout, c.x, query));
}
