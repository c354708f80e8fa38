// The epilogue of a split-K instance that writes its sums to a row of its own (INSTANCE_ROWS):
// scaled by the weights' output scales, which are linear; matmul_partials_sum.frag adds the rows and
// applies matmul_epilogue.glsl to the total.
vec4 epilogue(vec4 acc, int row, int col) { return acc * weightScale(col); }
