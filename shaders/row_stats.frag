// LayerNorm statistics of each row: (mean, 1 / sqrt(variance + eps)), always in fp32. Two passes over
// the row (mean, then squared deviations) keep the variance accurate. The next matmul normalises on fetch.
#include "common.glsl"

uniform highp sampler2DArray u_x;
uniform int u_cols;  // real columns; padding columns are 0 and are masked out of the variance
uniform float u_eps;

out vec4 o_stats;

void main() {
    ivec2 c = outputCoord();
    float sum = 0.0;
    for (int i = 0; i < u_x_layout.x; ++i) sum += dot(fetch(u_x, u_x_layout, c.x, i), vec4(1.0));
    float mean = sum / float(u_cols);
    float squares = 0.0;
    for (int i = 0; i < u_x_layout.x; ++i) {
        vec4 inside = vec4(lessThan(ivec4(4 * i) + ivec4(0, 1, 2, 3), ivec4(u_cols)));
        vec4 d = (fetch(u_x, u_x_layout, c.x, i) - mean) * inside;
        squares += dot(d, d);
    }
    o_stats = vec4(mean, inversesqrt(squares / float(u_cols) + u_eps), 0.0, 0.0);
}
