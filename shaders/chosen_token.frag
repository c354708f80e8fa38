// ids[p] = the id in texel 0 of u_candidates: the best of a search or a draw's choice. A step whose
// token never leaves the GPU before the step that feeds it runs (Engine::stepFromChosenToken).
#include "common.glsl"
// Input (declared by the pass): u_candidates, (key, id, ...) in texel 0 of row 0.

out vec4 o_value;

void main() {
    outputCoord();
    o_value = vec4(fetch(u_candidates, u_candidates_layout, 0, 0).y, 0.0, 0.0, 0.0);
}
