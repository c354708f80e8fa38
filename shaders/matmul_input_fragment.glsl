// A matmul's input side where each fragment fetches its input texels (matmul.frag), transformed by
// the matmul_input_norm.glsl or matmul_input_activation.glsl included before this.
uniform int u_in_row_offset;

struct MatmulInput {
    int row;
    vec2 normalization;
};

MatmulInput matmulInputRow(int outRow) {
    int row = outRow + u_in_row_offset;
    return MatmulInput(row, inputRowNormalization(row));
}

vec4 matmulInput(MatmulInput src, int j, int i) { return inputTexel(src.row, i, src.normalization); }

#ifdef PAIRED_ROWS
// Rows src.row (even) and src.row + 1 from one fetch (matmul.frag).
mat2x4 matmulInputPair(MatmulInput src, int j, int i) { return inputTexelPair(src.row, i); }
#endif
