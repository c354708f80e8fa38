// Split-K: instance s of the draw sums input texels [s, s + 1) * SPLIT_TEXELS, and blending adds the
// instances (src/gl/pass.h). SPLIT_TEXELS divides the input texels, so the loop has a constant trip
// count that the compiler can unroll, issuing every fetch before the first returns (the one-row pass
// writes it out: matmul_input_vertex.glsl).
#define INSTANCE_TEXELS SPLIT_TEXELS

flat in int v_instance;

int matmulInstance() { return v_instance; }
