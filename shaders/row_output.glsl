// The main() of a pass whose every output texel depends on one row: `vec4 rowTexel(int row, int
// texel)`, declared before this file, computes it. Written as fp32 texels, or where the output holds
// fp16 row pairs (PAIR_OUTPUT; TexelFormat::HalfPairs) rows 2p and 2p + 1 in one texel: the prompt
// matmuls after a LayerNorm or activation pass then fetch two rows of input per texel
// (Tuning::halfPromptInputs). A pair's row outside the run [u_rows.x, u_rows.y) is a copy of the
// run's nearest row, so nothing outside the run is read.
#ifdef PAIR_OUTPUT
out uvec4 o_pair;

void main() {
    ivec2 c = outputCoord();
    int even = 2 * c.x;
    o_pair = halfPair(rowTexel(max(even, u_rows.x), c.y), rowTexel(min(even + 1, u_rows.y - 1), c.y));
}
#else
out vec4 o_value;

void main() {
    ivec2 c = outputCoord();
    o_value = rowTexel(c.x, c.y);
}
#endif
