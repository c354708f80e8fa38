// A matmul's input side for one output row, split: matmul_row.vert fetched (and transformed) the
// instance's input texels once for all its fragments.
#include "fetch.glsl"

flat in vec4 v_input[SPLIT_TEXELS];

// matmul.frag writes its loop out, so every index into v_input is a constant: as a loop, one-row
// matmuls over 4-bit weights with 16 texels took 1.2 times as long in Chromium on an H200 (ANGLE on
// Vulkan); natively the two ran alike.
#define TEXELS_WRITTEN_OUT

struct MatmulInput {
    int unused;
};

MatmulInput matmulInputRow(int outRow) { return MatmulInput(0); }

vec4 matmulInput(MatmulInput src, int j, int i) { return v_input[j]; }
