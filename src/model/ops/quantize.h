#pragma once
// Quantizing a float matrix to 4-bit affine blocks on the GPU (weights 'int4'): a pass writes each
// block's scale and offset (the block's range over 15 steps, from its least value), a second its
// codes, into the layout the block-quantized matmuls read (ModelWeights, BlockFormat;
// shaders/matmul_weight_blocks.glsl). Nothing is quantized on the CPU.
#include "gl/program.h"
#include "gl/texture.h"

namespace gpt2 {

// The 4-bit affine blocks of one matrix: its codes (Int4Quads), and its fp32 scales and offsets
// ([K / (4 blockTexels), N]).
struct BlockTargets {
    Texture& codes;
    Texture& scales;
    Texture& offsets;
    int blockTexels;
};

// `floats` holds the engine matrix, [K, N] or, `transposed`, [N, K] (the tied lm_head).
void quantizeToBlocks(ProgramCache& programs, const Texture& floats, const BlockTargets& out, bool transposed);

}  // namespace gpt2
