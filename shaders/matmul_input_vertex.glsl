// A matmul's input side for one output row, split: matmul_row.vert fetched (and transformed) the
// instance's input texels once for all its fragments.
#include "fetch.glsl"

flat in vec4 v_input[SPLIT_TEXELS];

struct MatmulInput {
    int unused;
};

MatmulInput matmulInputRow(int outRow) { return MatmulInput(0); }

vec4 matmulInput(MatmulInput src, int j, int i) { return v_input[j]; }
