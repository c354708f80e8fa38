// LayerNorm of rows of x: out[r] = (x[r + u_in_row_offset] - mean) / sqrt(var + eps) * gamma + beta,
// in fp32. Each fragment computes its row's statistics itself (rowStatistics): rows are short next to
// the matmuls that read the result, and the matmuls then fetch one normalised texel instead of x,
// gamma and beta. ONE_PASS_MOMENTS picks how (below).
#include "common.glsl"
// Inputs (declared by the pass): u_x, u_gamma, u_beta.

uniform int u_cols;  // real columns; padding columns are 0 and are masked out of the variance
uniform float u_eps;
uniform int u_in_row_offset;

out vec4 o_normed;

// 1 for the real columns of texel i, 0 for padding columns and texels past the row.
vec4 realColumns(int i) { return vec4(lessThan(ivec4(4 * i) + ivec4(0, 1, 2, 3), ivec4(u_cols))); }

// Every fragment of a row reads the whole row for its statistics, 32 texels per loop iteration so
// that their fetches are in flight together. Two ways to get them, both without the cancellation of
// E[x^2] - E[x]^2, each the faster one where it runs (docs/benchmarks.md):
#ifdef ONE_PASS_MOMENTS
// GPUs: one pass. Each group of 8 texels gets its own mean and squared deviations from its values in
// registers, merged by Chan et al.'s update, which is stable in floating point. Half the fetches of
// two passes: an H200's LayerNorms took 0.86 instead of 1.04 ms per 355M token.
struct Moments {
    float n;
    float mean;
    float m2;  // sum of squared deviations from the mean
};

// Adds texels i .. i + 7 (an index past the row reads its last texel, masked out with the padding
// columns) to m.
void addGroup(int row, int i, inout Moments m) {
    vec4 v[8], inside[8];
    vec4 sum = vec4(0.0);
    float count = 0.0;
    for (int j = 0; j < 8; ++j) {
        inside[j] = realColumns(i + j);
        v[j] = fetch(u_x, u_x_layout, row, min(i + j, u_x_layout.x - 1)) * inside[j];
        sum += v[j];
        count += dot(inside[j], vec4(1.0));
    }
    float mean = dot(sum, vec4(1.0)) / max(count, 1.0);
    vec4 squares = vec4(0.0);
    for (int j = 0; j < 8; ++j) {
        vec4 d = (v[j] - mean) * inside[j];
        squares += d * d;
    }
    float total = max(m.n + count, 1.0);
    float delta = mean - m.mean;
    m.mean += delta * count / total;
    m.m2 += dot(squares, vec4(1.0)) + delta * delta * m.n * count / total;
    m.n += count;
}

void rowStatistics(int row, out float mean, out float variance) {
    Moments m = Moments(0.0, 0.0, 0.0);
    for (int i = 0; i < u_x_layout.x; i += 32) {
        addGroup(row, i, m);
        addGroup(row, i + 8, m);
        addGroup(row, i + 16, m);
        addGroup(row, i + 24, m);
    }
    mean = m.mean;
    variance = m.m2 / float(u_cols);
}
#else
// Software renderers: a pass for the mean, another for the squared deviations, without arrays or
// merges, whose arithmetic costs a CPU more than the fetches (SwiftShader decoded 124M in 290 ms
// per token this way, 360-420 with the GPU's method).

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

void rowStatistics(int row, out float mean, out float variance) {
    mean = dot(rowSum(row, 0.0, false), vec4(1.0)) / float(u_cols);
    variance = dot(rowSum(row, mean, true), vec4(1.0)) / float(u_cols);
}
#endif

void main() {
    ivec2 c = outputCoord();
    int row = c.x + u_in_row_offset;
    float mean, variance;
    rowStatistics(row, mean, variance);
    float rstd = inversesqrt(variance + u_eps);
    // Padding columns have gamma = beta = 0, so they stay 0.
    o_normed = (fetch(u_x, u_x_layout, row, c.y) - mean) * rstd * fetch(u_gamma, u_gamma_layout, 0, c.y) +
               fetch(u_beta, u_beta_layout, 0, c.y);
}
