// out[r] = activate(x[r + u_in_row_offset]) (ACTIVATION, a kind of activation.glsl): a prompt chunk's
// MLP activation in one pass, where the many-row projection would otherwise activate each input
// texel once per output texel (the split c_fc leaves its sums unactivated). Written as fp32 rows or
// fp16 row pairs (row_output.glsl).
#include "common.glsl"
#include "activation.glsl"
// Input (declared by the pass): u_x.

uniform int u_in_row_offset;

vec4 rowTexel(int row, int texel) { return activate(fetch(u_x, u_x_layout, row + u_in_row_offset, texel), ACTIVATION); }

#include "row_output.glsl"
