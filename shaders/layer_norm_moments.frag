// The row moments a LayerNorm needs, once per row (GPUs; src/model/ops/layer_norm.h, LayerNormOp): instance s
// of a split-K draw (Pass instances, added by blending) sums texels [s, s + 1) * SPLIT_TEXELS of row
// r of x into out[r] = (sum(x - c), sum((x - c)^2), c, 0) (rows as x's), c being the mean of the
// row's first SPLIT_TEXELS texels, which every instance computes alike (only instance 0 writes it,
// so the blend leaves it as is).
// Why shifted sums: E[x^2] - E[x]^2 cancels when the mean is far from zero next to the spread. With
// c the mean of a group of g of the row's n values, n (c - mean)^2 <= (n / g) * n * variance, so
// at most log2(n / g) bits cancel, however far the row is from zero or however far out one value
// is (the row's first value alone as c lost log2(n) bits when it was an outlier).
// Why a pass of its own: a LayerNorm whose every fragment computed its row's statistics read the
// whole row once per output texel; on GPUs this pass and the normalisation after it take less
// (docs/architecture.md, "What the tuning decides, and why").
#include "common.glsl"
#include "layer_norm.glsl"
// Input (declared by the pass): u_x.

flat in int v_instance;

out vec4 o_moments;

void main() {
    vec4 sums = shiftedSums(outputCoord().x, v_instance * SPLIT_TEXELS, SPLIT_TEXELS, SPLIT_TEXELS);
    o_moments = vec4(sums.xy, v_instance == 0 ? sums.z : 0.0, 0.0);
}
