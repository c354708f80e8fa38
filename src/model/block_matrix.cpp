#include "model/block_matrix.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace gpt2 {

BlockMatrix blockMatrix(const ModelConfig& c, const MatrixSpec& spec, GgmlType type, const std::uint8_t* bytes,
                        std::int64_t K, std::int64_t outputs) {
    const GgmlTypeInfo& info = *ggmlTypeInfo(std::uint32_t(type));
    const bool channelsAreRows = outputChannelsAreRows(spec);
    const std::int64_t engineK = channelsAreRows ? spec.cols : spec.rows;
    const std::int64_t engineOutputs =
        channelsAreRows ? std::int64_t(spec.sourceShape[0]) : std::int64_t(spec.sourceShape[1]);
    if (headsPadded(c, spec))
        fail("tensor ", spec.name, ": the engine pads its heads of ", c.headDim(),
             " values to whole texels (a head size that is not a multiple of 4); such a model cannot keep its "
             "weights quantized");
    if (K != engineK) fail("tensor ", spec.name, " has ", K, " inputs per output, the engine expects ", engineK);
    if (outputs != engineOutputs || K % info.blockValues != 0)
        fail("tensor ", spec.name, " has ", outputs, " outputs of ", K, " values, expected ", engineOutputs,
             " of whole ", info.name, " blocks");
    BlockMatrix out;
    out.type = type;
    out.source = bytes;
    out.K = K;
    out.rowBytes = K / info.blockValues * info.blockBytes;
    out.outputs = int(outputs);
    out.channelsAreRows = channelsAreRows;
    out.blocks = int(K / info.scaleValues);
    out.channels = ((channelsAreRows ? spec.rows : spec.cols) + 3) / 4 * 4;
    const std::size_t params = std::size_t(out.blocks) * std::size_t(out.channels);
    // Output n's scales (and offsets) go to column n; those of padding channels stay 0.
    const auto decodeAll = [&](auto& scales, auto& offsets, auto decode) {
        scales.assign(params, 0);
        if (info.offsets) offsets.assign(params, 0);
        for (std::int64_t n = 0; n < outputs; ++n)
            decode(type, bytes + n * out.rowBytes, K, scales.data() + n, info.offsets ? offsets.data() + n : nullptr,
                   out.channels);
    };
    if (info.halfParams)
        decodeAll(out.halfScales, out.halfOffsets, decodeHalfScales);
    else
        decodeAll(out.scales, out.offsets, decodeScales);
    return out;
}

}  // namespace gpt2
