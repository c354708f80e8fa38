// Split-K: instance s of the draw sums input texels [s, s + 1) * SPLIT_TEXELS, and blending adds the
// instances (src/gl/pass.h). SPLIT_TEXELS divides the input texels, so the loop has a constant trip
// count that the compiler unrolls, issuing every fetch before the first returns.
#define INSTANCE_TEXELS SPLIT_TEXELS

flat in int v_instance;

int matmulInstance() { return v_instance; }
