// log Σ exp of rows of logits on the GPU, first level: for each row and block of u_block_texels
// texels, (max m, Σ exp(logit - m), 0, 0) over the block's first-u_vocab logits (one long serial
// loop per row would leave a GPU all but idle).
#include "common.glsl"
// Input (declared by the pass): u_logits, one row per position.

uniform int u_vocab;
uniform int u_block_texels;

#include "log_sum_exp.glsl"

out vec4 o_partial;

void main() {
    ivec2 c = outputCoord();
    int first = c.y * u_block_texels;
    o_partial = vec4(logSumExpPartial(c.x, first, min(first + u_block_texels, u_logits_layout.x)), 0.0, 0.0);
}
