// A matmul whose every fragment sums all input texels in one loop.
#define INSTANCE_TEXELS u_x_layout.x

int matmulInstance() { return 0; }
