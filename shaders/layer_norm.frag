// LayerNorm of rows of x: out[r] = (x[r + u_in_row_offset] - mean) / sqrt(var + eps) * gamma + beta,
// computed in fp32 and written out (as fp32 rows or fp16 row pairs: row_output.glsl) so that the
// matmuls after it fetch one normalised texel instead of x, gamma and beta. The row statistics come
// from one of (src/model/ops/layer_norm.h, LayerNormOp):
//   ROW_MOMENTS  u_moments, the shifted sums of x's rows from layer_norm_moments.frag (GPUs);
//   otherwise    each fragment computes its row's statistics itself (software renderers).
#include "common.glsl"
#include "layer_norm.glsl"
// Inputs (declared by the pass): u_x, u_gamma, u_beta, with ROW_MOMENTS u_moments.

uniform float u_eps;
uniform int u_in_row_offset;

#ifdef ROW_MOMENTS
vec2 rowNormalization(int row) { return rowNormalization(fetch(u_moments, u_moments_layout, row, 0), u_eps); }
#else
// Software renderers: the fragment reads the whole row twice, once for the mean and once for the
// squared deviations, 32 texels per loop iteration. Simple arithmetic is what pays on a CPU: it ran
// faster than one pass over the row merging the moments of groups of texels (docs/architecture.md,
// "What the tuning decides, and why").

// Texel i of the row minus `mean`, padding columns zeroed; squared if `square`.
vec4 term(int row, int i, float mean, bool square) {
    vec4 d = (fetch(u_x, u_x_layout, row, i) - mean) * realColumns(i);
    return square ? d * d : d;
}

vec4 eightTerms(int row, int i, float mean, bool square) {
    return ((term(row, i, mean, square) + term(row, i + 1, mean, square)) +
            (term(row, i + 2, mean, square) + term(row, i + 3, mean, square))) +
           ((term(row, i + 4, mean, square) + term(row, i + 5, mean, square)) +
            (term(row, i + 6, mean, square) + term(row, i + 7, mean, square)));
}

vec4 rowSum(int row, float mean, bool square) {
    const int texels = u_x_layout.x;
    vec4 sum = vec4(0.0);
    for (int g = 0; g < texels / 32; ++g) {
        int i = 32 * g;
        sum += (eightTerms(row, i, mean, square) + eightTerms(row, i + 8, mean, square)) +
               (eightTerms(row, i + 16, mean, square) + eightTerms(row, i + 24, mean, square));
    }
    for (int g = texels / 32 * 4; g < texels / 8; ++g) sum += eightTerms(row, 8 * g, mean, square);
    for (int i = texels / 8 * 8; i < texels; ++i) sum += term(row, i, mean, square);
    return sum;
}

vec2 rowNormalization(int row) {
    float mean = dot(rowSum(row, 0.0, false), vec4(1.0)) / float(u_cols);
    float variance = dot(rowSum(row, mean, true), vec4(1.0)) / float(u_cols);
    return vec2(mean, inversesqrt(variance + u_eps));
}
#endif

vec4 rowTexel(int outRow, int texel) {
    int row = outRow + u_in_row_offset;
    return normalizedTexel(fetch(u_x, u_x_layout, row, texel), rowNormalization(row),
                           fetch(u_gamma, u_gamma_layout, 0, texel), fetch(u_beta, u_beta_layout, 0, texel));
}

#include "row_output.glsl"
