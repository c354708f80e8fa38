// ids[p] = the id of the best candidate of the last top-k search: a greedy step whose token never
// leaves the GPU before the next step starts (Engine::stepFromTopCandidate).
#include "common.glsl"
// Input (declared by the pass): u_candidates, one candidate per row as (logit, id, 0, 0), best first.

out vec4 o_value;

void main() {
    outputCoord();
    o_value = vec4(fetch(u_candidates, u_candidates_layout, 0, 0).y, 0.0, 0.0, 0.0);
}
