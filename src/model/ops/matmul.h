#pragma once
// out = epilogue(input(x) @ W): shaders/matmul.frag, its variant composed from includes by
// matmulPass (the input side, the K range, the weight layout, the epilogue).
#include <optional>
#include <vector>

#include "format/model_config.h"
#include "gl/pass.h"
#include "model/ops/layer_norm.h"

namespace gpt2 {

enum class Epilogue { None, GeluTanh, GeluErf, Relu };
Epilogue activationEpilogue(Activation activation);

// A weight matrix as ModelWeights keeps it: its values (floats, or quantized codes), and for int8
// weights the scale of each output channel, for block-quantized ones the scales and offsets of its
// blocks of blockTexels input texels.
struct WeightMatrix {
    const Texture* values = nullptr;
    const Texture* scales = nullptr;
    const Texture* offsets = nullptr;
    int blockTexels = 0;
};

struct MatmulSpec {
    const Texture* x = nullptr;
    const Texture* weight = nullptr;    // [K, N] (or [N, K] with transposedWeight), rows padded to x's texels
    const Texture* bias = nullptr;      // [1, N]
    const Texture* residual = nullptr;  // added last, rows as the output
    // A caller's interventions (model/interventions.h): [1, N] added after the bias, and [1, N] of 1 or
    // 0 that multiplies the activated output (its zeros ablate columns).
    const Texture* addend = nullptr;
    const Texture* columnMask = nullptr;
    Epilogue activation = Epilogue::None;       // of the output (not with splitTexels)
    Epilogue inputActivation = Epilogue::None;  // of x, on fetch (the MLP projection after a split c_fc)
    bool transposedWeight = false;
    // One output row per run, split: the vertex shader of each split-K instance fetches its input
    // texels (applying inputLayerNorm or inputActivation) for all its fragments (matmul_row.vert).
    bool inputFromVertex = false;
    // Instead of inputActivation. Without inputFromVertex it costs two more fetches per input texel
    // and output texel; the model then normalises in a pass of its own instead. With inputFromVertex
    // its moments may be null: the vertex shader then sums them over the whole row.
    std::optional<InputLayerNorm> inputLayerNorm = std::nullopt;
    // With inputFromVertex: the context's varying vectors (GlCapabilities::varyingVectors), which bound
    // the input texels of an instance.
    int varyingVectors = 15;
    int inRowOffset = 0;  // output row r reads x row r + inRowOffset (setInputRowOffset)
    // > 0: split-K, one blended instance per splitInstanceTexels(input texels, splitTexels) input
    // texels (Pass instances); 0: one loop.
    int splitTexels = 0;
    // Int8Quads weights: [1, N], the scale of each output channel. Block-quantized weights (Int8Quads
    // or Int4Quads codes, weightBlockTexels > 0): [K / block, N], with offsets where the format has them.
    const Texture* weightScale = nullptr;
    const Texture* weightOffset = nullptr;
    int weightBlockTexels = 0;
    // > 1: each fragment computes this many consecutive rows (register tiling: one weight fetch serves
    // them all) into as many render targets per output (Pass::writeRowGroups): outputs with rows
    // interleaved over a multiple of it, runs of whole groups, at most 8 targets in all.
    int rowsPerFragment = 1;
    // The weight's column part that output 0 takes: a pass per part of the fused Q/K/V projection
    // (one output each, so that more rows fit the render targets) sets its part here.
    int firstPart = 0;
};

// The input texels per split-K instance: the largest divisor of `texels` up to `splitTexels`, so that
// every instance runs the same constant number of iterations (which the compiler unrolls).
int splitInstanceTexels(int texels, int splitTexels);

// Whether a matmulPass of `spec` can take its input from the vertex shader (inputFromVertex): split-K,
// with the input texels of an instance and the instance within spec.varyingVectors (at least 15 on
// every OpenGL ES 3.0 / WebGL2 GPU, so 14 texels per instance fit everywhere).
bool canTakeInputFromVertex(const MatmulSpec& spec);

// Whether a matmulPass of `spec` fetches its input rows two at a time: x of fp16 row pairs, several
// rows per fragment, fetched by the fragments without a LayerNorm. Its runs must then read an even
// input row for every even output row (an even u_in_row_offset).
bool readsRowPairs(const MatmulSpec& spec);

// One output, or three (the fused Q/K/V projection): output p takes weight columns
// [(firstPart + p) * partCols, (firstPart + p + 1) * partCols), partCols being the outputs' column
// count.
// Split-K needs output rows of whole lines and no output activation. A pass with inputFromVertex
// must be run for one row at a time (runs of more rows fail).
Pass matmulPass(ProgramCache& programs, std::vector<Texture*> outputs, const MatmulSpec& spec);

}  // namespace gpt2
