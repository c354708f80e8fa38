#include "gl/tensor_layout.h"

#include <algorithm>

#include "util/error.h"

namespace gpt2 {

TensorLayout TensorLayout::make(int rows, int cols, const TextureLimits& limits, const char* what) {
    if (rows <= 0 || cols <= 0) fail(what, ": cannot lay out a ", rows, " x ", cols, " matrix");
    const int max = limits.maxTextureSize;
    TensorLayout l;
    l.rows = rows;
    l.cols = cols;
    l.texelsPerRow = (cols + 3) / 4;
    if (l.texelsPerRow <= max) {
        // Whole rows per line; the fewest that keep the height within the limit.
        const int rowsPerLine = std::min((rows + max - 1) / max, max / l.texelsPerRow);
        l.width = l.texelsPerRow * rowsPerLine;
    } else {
        l.width = max;
    }
    const std::int64_t lines = (l.texelCount() + l.width - 1) / l.width;
    l.height = int(std::min<std::int64_t>(lines, max));
    l.pages = int((lines + l.height - 1) / l.height);
    if (l.pages > limits.maxArrayLayers)
        fail(what, ": a ", rows, " x ", cols, " matrix needs ", l.pages, " texture layers of ", max, " x ", max,
             " texels, the GPU allows ", limits.maxArrayLayers);
    return l;
}

}  // namespace gpt2
