// out[p][r, n] = epilogue(sum_s partials_p[s, n]) for each of PARTS outputs: the second pass of a
// one-row split-K matmul whose PARTIALS instances each wrote its sums to a row of its own
// (matmul_epilogue_partial.glsl): instances that blend into one row, drawing the same pixels, run
// slower on an H200 than side by side (docs/architecture.md, "Rows of partial sums"). Inputs
// (declared by the pass): u_partials0 .. u_partials{PARTS - 1}, the epilogue's (matmul_epilogue.glsl).
#include "common.glsl"

uniform int u_part_texels;
uniform int u_first_part;

#define OUTPUTS PARTS
#include "outputs.glsl"

// The epilogue of the whole sum: the bias, addend and residual once, as instance 0 adds them.
int matmulInstance() { return 0; }
#include "matmul_weight_unscaled.glsl"
#include "matmul_epilogue.glsl"

vec4 partialsSum(highp sampler2DArray partials, ivec4 L, int col) {
    vec4 sum = vec4(0.0);
    for (int s = 0; s < PARTIALS; ++s) sum += fetch(partials, L, s, col);
    return sum;
}

#define PART_COLUMN(p) (c.y + (u_first_part + p) * u_part_texels)

void main() {
    ivec2 c = outputCoord();
    vec4 result[OUTPUTS];
    result[0] = epilogue(partialsSum(u_partials0, u_partials0_layout, c.y), c.x, PART_COLUMN(0));
#if PARTS == 3
    result[1] = epilogue(partialsSum(u_partials1, u_partials1_layout, c.y), c.x, PART_COLUMN(1));
    result[2] = epilogue(partialsSum(u_partials2, u_partials2_layout, c.y), c.x, PART_COLUMN(2));
#endif
    store(result);
}
