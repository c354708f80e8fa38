#pragma once
// Quantizing a float matrix on the GPU as it loads: a pass writes the scales (and offsets), a second
// the codes, into the layouts the quantized matmuls read (ModelWeights). Nothing is quantized on the
// CPU. Two kinds, told apart by the codes' format:
//  - Int4Quads (weights 'int4'): 4-bit affine blocks, a scale and an offset per block of inputs and
//    output column (BlockFormat; shaders/matmul_weight_blocks.glsl);
//  - Int8Quads (weights 'int8'): symmetric int8 codes, a scale per output column and no offset
//    (shaders/matmul_weight_scale.glsl); the same values as quantizeInt8 (model/int8_quantization.h).
#include "gl/program.h"
#include "gl/texture.h"

namespace gpt2 {

// The quantized form of one matrix: its codes, its fp32 scales and, for 4-bit blocks, its offsets,
// [K / (4 blockTexels), N] (int8: blockTexels covers all of K, one row of scales).
struct BlockTargets {
    Texture& codes;
    Texture& scales;
    Texture* offsets;
    int blockTexels;
};

// `floats` holds the engine matrix, [K, N] or, `transposed`, [N, K] (the tied lm_head); its rows
// (K, or N transposed) are whole quads of four.
void quantizeToBlocks(ProgramCache& programs, const Texture& floats, const BlockTargets& out, bool transposed);

}  // namespace gpt2
