// out[r] = activate(x[r + u_in_row_offset]) (ACTIVATION, a kind of activation.glsl): a prompt chunk's
// MLP activation in one pass, where the many-row projection would otherwise activate each input
// texel once per output texel (the split c_fc leaves its sums unactivated).
#include "common.glsl"
#include "activation.glsl"
// Input (declared by the pass): u_x.

uniform int u_in_row_offset;

out vec4 o_value;

void main() {
    ivec2 c = outputCoord();
    o_value = activate(fetch(u_x, u_x_layout, c.x + u_in_row_offset, c.y), ACTIVATION);
}
