#pragma once
// A quantized GGUF tensor as the engine keeps it: blocks of codes that stay in the file's bytes, with
// their scales and offsets decoded.
#include <cstdint>
#include <vector>

#include "format/ggml_type.h"
#include "model/engine_matrices.h"

namespace gpt2 {

// A matrix of affine blocks (format/ggml_type.h) in the engine's layout. Its codes stay in the
// tensor's bytes, which go to the GPU as they are and are decoded there (model/ops/block_codes.h);
// the CPU decodes the scales and offsets only, [K / scaleValues, output channels padded to 4]
// whichever way the matrix runs: as fp16 bits where the type's are fp16 values (halfScales and
// halfOffsets), as floats otherwise (scales and offsets); offsets empty where the type has none.
// Output channel n is the tensor's row n.
struct BlockMatrix {
    GgmlType type = GgmlType::Q8_0;
    const std::uint8_t* source = nullptr;  // the tensor's bytes: rows of K values, one per output
    std::int64_t K = 0;
    std::int64_t rowBytes = 0;
    int outputs = 0;  // the tensor's rows
    bool channelsAreRows = false;
    std::vector<float> scales;
    std::vector<float> offsets;
    std::vector<std::uint16_t> halfScales;
    std::vector<std::uint16_t> halfOffsets;
    int blocks = 0;    // scales along K
    int channels = 0;  // output channels, padded
};
// The engine matrix of `spec` from a tensor of `type` of `outputs` rows of K values (a GGUF tensor:
// rows are output channels, blocks run along K), reading its `bytes`, which must outlive it. Throws
// when the engine pads the heads of attention matrices (a head size that is not a multiple of 4),
// which would split blocks or move output channels.
BlockMatrix blockMatrix(const ModelConfig& config, const MatrixSpec& spec, GgmlType type, const std::uint8_t* bytes,
                        std::int64_t K, std::int64_t outputs);

}  // namespace gpt2
