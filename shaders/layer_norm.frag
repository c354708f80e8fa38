// LayerNorm of rows of x: out[r] = (x[r + u_in_row_offset] - mean) / sqrt(var + eps) * gamma + beta,
// in fp32. Each fragment computes its row's statistics itself, in two passes over the row (mean, then
// squared deviations, which keeps the variance accurate): rows are short next to the matmuls that
// read the result, and the matmuls then fetch one normalised texel instead of x, gamma and beta.
#include "common.glsl"

uniform highp sampler2DArray u_x;
uniform highp sampler2DArray u_gamma;
uniform highp sampler2DArray u_beta;
uniform int u_cols;  // real columns; padding columns are 0 and are masked out of the variance
uniform float u_eps;
uniform int u_in_row_offset;

out vec4 o_normed;

void main() {
    ivec2 c = outputCoord();
    int row = c.x + u_in_row_offset;
    float sum = 0.0;
    for (int i = 0; i < u_x_layout.x; ++i) sum += dot(fetch(u_x, u_x_layout, row, i), vec4(1.0));
    float mean = sum / float(u_cols);
    float squares = 0.0;
    for (int i = 0; i < u_x_layout.x; ++i) {
        vec4 inside = vec4(lessThan(ivec4(4 * i) + ivec4(0, 1, 2, 3), ivec4(u_cols)));
        vec4 d = (fetch(u_x, u_x_layout, row, i) - mean) * inside;
        squares += dot(d, d);
    }
    float rstd = inversesqrt(squares / float(u_cols) + u_eps);
    // Padding columns have gamma = beta = 0, so they stay 0.
    o_normed = (fetch(u_x, u_x_layout, row, c.y) - mean) * rstd * fetch(u_gamma, u_gamma_layout, 0, c.y) +
               fetch(u_beta, u_beta_layout, 0, c.y);
}
