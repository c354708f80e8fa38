// An engine matrix (RGBA32F or RGBA16F) from its transpose as a file stores it: a GGUF Conv1D weight
// keeps a row per output channel, where the engine keeps a row per input (ModelWeights). This is how
// such a tensor's bytes, uploaded as they are, get the engine's layout without a CPU transpose.
// Input (declared by the pass): u_x, the stored matrix (its rows are the output's columns), as fp16
// bits (TexelFormat::Bits: u_x_bits) or RGBA32F. fp16 bits are widened exactly, subnormals
// included (unpackHalf2x16 may flush them), so the values are those the CPU would upload. Output rows
// past the stored matrix's columns are zeros (quantizing reads whole quads of rows).
#include "common.glsl"

uniform int u_stored_cols;  // the stored matrix's columns: the output's rows that hold values
out vec4 o_value;

float halfValue(uint bits) {
    uint exponent = (bits >> 10) & 31u, mantissa = bits & 1023u;
    float magnitude = exponent == 0u ? float(mantissa) * exp2(-24.0)
                                     : uintBitsToFloat(((exponent + 112u) << 23) | (mantissa << 13));
    return (bits & 0x8000u) != 0u ? -magnitude : magnitude;
}

// Column `col` of stored row `row`.
float stored(int row, int col) {
#ifdef u_x_bits
    uvec2 u = texelFetch(u_x, texelAddress(u_x_layout, row, col >> 2), 0).xy;
    uint word = (col & 2) == 0 ? u.x : u.y;
    return halfValue((col & 1) == 0 ? word & 0xFFFFu : word >> 16);
#else
    return fetch(u_x, u_x_layout, row, col >> 2)[col & 3];
#endif
}

void main() {
    ivec2 c = outputCoord();  // (row, texel): stored column c.x of stored rows 4 c.y .. 4 c.y + 3
    if (c.x >= u_stored_cols) {
        o_value = vec4(0.0);
        return;
    }
    int row = 4 * c.y;
    o_value = vec4(stored(row, c.x), stored(row + 1, c.x), stored(row + 2, c.x), stored(row + 3, c.x));
}
