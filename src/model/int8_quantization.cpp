#include "model/int8_quantization.h"

#include <cmath>
#include <cstring>

namespace gpt2 {

Int8Matrix quantizeInt8(const std::vector<float>& values, int rows, int cols, bool channelsAreRows) {
    const int paddedRows = (rows + 3) / 4 * 4, paddedCols = (cols + 3) / 4 * 4;
    Int8Matrix out;
    out.scales.assign(std::size_t(channelsAreRows ? paddedRows : paddedCols), 0.0f);
    auto at = [&](int r, int c) { return values[std::size_t(r) * std::size_t(cols) + std::size_t(c)]; };
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            float& largest = out.scales[std::size_t(channelsAreRows ? r : c)];
            largest = std::max(largest, std::abs(at(r, c)));
        }
    // float arithmetic throughout, as the GPU's passes do it (quantize_block_params.frag).
    const float oneOver127 = 1.0f / 127.0f;
    for (float& scale : out.scales) {
        std::uint32_t bits;
        const float product = scale * oneOver127;
        std::memcpy(&bits, &product, 4);
        bits &= 0xFFFFFF00u;
        std::memcpy(&scale, &bits, 4);
    }
    out.values.assign(std::size_t(paddedRows) * std::size_t(paddedCols), 0);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            const float scale = out.scales[std::size_t(channelsAreRows ? r : c)], value = at(r, c);
            if (!(scale > 0)) continue;
            int code = 0;
            while (code < 127 && std::abs(value) >= float(2 * code + 1) * (0.5f * scale)) ++code;
            out.values[std::size_t(r) * paddedCols + c] = std::int8_t(value < 0 ? -code : code);
        }
    return out;
}

bool quantizedWithInt8(const MatrixSpec& spec) { return spec.rows > 1 && spec.name != "wpe.weight"; }

int int8Channels(const MatrixSpec& spec) { return ((outputChannelsAreRows(spec) ? spec.rows : spec.cols) + 3) / 4 * 4; }

}  // namespace gpt2
