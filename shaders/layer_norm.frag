// LayerNorm of rows of x: out[r] = (x[r + u_in_row_offset] - mean) / sqrt(var + eps) * gamma + beta,
// in fp32. Each fragment computes its row's statistics itself, in two passes over the row (mean, then
// squared deviations, which keeps the variance accurate): rows are short next to the matmuls that
// read the result, and the matmuls then fetch one normalised texel instead of x, gamma and beta.
#include "common.glsl"
// Inputs (declared by the pass): u_x, u_gamma, u_beta.

uniform int u_cols;  // real columns; padding columns are 0 and are masked out of the variance
uniform float u_eps;
uniform int u_in_row_offset;

out vec4 o_normed;

// Texel i of the row minus `mean`, padding columns zeroed; squared if `square`.
vec4 term(int row, int i, float mean, bool square) {
    vec4 inside = vec4(lessThan(ivec4(4 * i) + ivec4(0, 1, 2, 3), ivec4(u_cols)));
    vec4 d = (fetch(u_x, u_x_layout, row, i) - mean) * inside;
    return square ? d * d : d;
}

vec4 eightTerms(int row, int i, float mean, bool square) {
    return ((term(row, i, mean, square) + term(row, i + 1, mean, square)) +
            (term(row, i + 2, mean, square) + term(row, i + 3, mean, square))) +
           ((term(row, i + 4, mean, square) + term(row, i + 5, mean, square)) +
            (term(row, i + 6, mean, square) + term(row, i + 7, mean, square)));
}

// The sum of the row's terms, 32 texels per iteration: their fetches are in flight together. A
// fragment waits out each iteration's fetch latency in turn, and that wait was this pass's cost
// (an H200 spent 19 us on a 768-wide row at one texel per iteration, 17 at eight; docs/benchmarks.md).
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

void main() {
    ivec2 c = outputCoord();
    int row = c.x + u_in_row_offset;
    float mean = dot(rowSum(row, 0.0, false), vec4(1.0)) / float(u_cols);
    float rstd = inversesqrt(dot(rowSum(row, mean, true), vec4(1.0)) / float(u_cols) + u_eps);
    // Padding columns have gamma = beta = 0, so they stay 0.
    o_normed = (fetch(u_x, u_x_layout, row, c.y) - mean) * rstd * fetch(u_gamma, u_gamma_layout, 0, c.y) +
               fetch(u_beta, u_beta_layout, 0, c.y);
}
