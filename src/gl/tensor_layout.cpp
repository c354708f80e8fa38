#include "gl/tensor_layout.h"

#include <algorithm>

#include "util/error.h"

namespace gpt2 {

namespace {
int log2(int powerOfTwo) {
    int shift = 0;
    while ((1 << shift) < powerOfTwo) ++shift;
    return shift;
}

bool powerOfTwo(int v) { return v > 0 && (v & (v - 1)) == 0; }
}  // namespace

glm::ivec4 TensorLayout::uniform() const {
    // The mode of one group's layout (its own pages), then the interleave on top.
    const int groupPages = pages / interleave;
    int mode = 0;
    if (groupPages == 1 && width == texelsPerRow) {
        mode = 1;
    } else if (groupPages == 1 && powerOfTwo(width)) {
        mode = -log2(width);
    } else if (width == texelsPerRow && powerOfTwo(height)) {
        mode = kPagedRowsMode + log2(height);
    }
    return {texelsPerRow, width, height, mode + kInterleaveMode * log2(interleave)};
}

namespace {
// Lines per page for a matrix too tall for one page, stored one row per line: the largest power of
// two (so a row's page and line are a shift and a mask of its index) whose last page wastes at most
// 1/16 of the rows (what that costs: docs/benchmarks/journal.md, "Memory and readback"), within the
// layer limit; 0 if none.
int pagedRowsHeight(int rows, int max, int maxLayers) {
    for (int lines = 1 << 30; lines >= 1; lines >>= 1) {
        if (lines > max) continue;
        const std::int64_t pages = (std::int64_t(rows) + lines - 1) / lines;
        if (pages > maxLayers) return 0;
        if ((pages * lines - rows) * 16 <= rows) return lines;
    }
    return 0;
}
}  // namespace

TensorLayout TensorLayout::make(int rows, int cols, const TextureLimits& limits, const char* what, int lineWidth,
                                int interleave) {
    if (rows <= 0 || cols <= 0) fail(what, ": cannot lay out a ", rows, " x ", cols, " matrix");
    if (!powerOfTwo(interleave))
        fail(what, ": rows interleaved over ", interleave, " pages; that must be a power of two");
    if (interleave > 1) {
        TensorLayout l = make((rows + interleave - 1) / interleave, cols, limits, what, lineWidth);
        l.rows = rows;
        l.pages *= interleave;
        l.interleave = interleave;
        if (l.pages > limits.maxArrayLayers)
            fail(what, ": a ", rows, " x ", cols, " matrix with rows interleaved over ", interleave, " pages needs ",
                 l.pages, " texture layers, the GPU allows ", limits.maxArrayLayers);
        return l;
    }
    const int max = limits.maxTextureSize;
    TensorLayout l;
    l.rows = rows;
    l.cols = cols;
    l.texelsPerRow = (cols + 3) / 4;
    if (lineWidth > 0 && lineWidth < l.texelsPerRow && lineWidth <= max) {
        if ((lineWidth & (lineWidth - 1)) != 0) fail(what, ": line width ", lineWidth, " must be a power of two");
        l.width = lineWidth;
        if (l.texelsPerRow % lineWidth == 0) {
            // Whole lines per row, and pages of whole rows (rowsAreWholeLines), as equal as can be.
            const int linesPerRow = l.texelsPerRow / lineWidth;
            const int rowsPerPage = std::max(max / linesPerRow, 1);
            l.pages = (rows + rowsPerPage - 1) / rowsPerPage;
            l.height = (rows + l.pages - 1) / l.pages * linesPerRow;
            if (l.pages > limits.maxArrayLayers || linesPerRow > max)
                fail(what, ": a ", rows, " x ", cols, " matrix in lines of ", lineWidth, " texels needs ", l.pages,
                     " texture layers of ", max, " lines, the GPU allows ", limits.maxArrayLayers);
            return l;
        }
    } else if (l.texelsPerRow <= max && rows <= max) {
        l.width = l.texelsPerRow;
    } else if (const int lines = limits.pagedRows ? pagedRowsHeight(rows, max, limits.maxArrayLayers) : 0;
               l.texelsPerRow <= max && lines > 0) {
        l.width = l.texelsPerRow;
        l.height = lines;
        l.pages = (rows + lines - 1) / lines;
        return l;
    } else if (l.texelsPerRow <= max) {
        // Whole rows per line, the fewest that keep the height within the limit (GPUs, or paged rows
        // would need too many layers).
        const int rowsPerLine = std::min((rows + max - 1) / max, max / l.texelsPerRow);
        l.width = l.texelsPerRow * rowsPerLine;
    } else {
        l.width = max;
    }
    const std::int64_t lines = (std::int64_t(rows) * l.texelsPerRow + l.width - 1) / l.width;
    l.height = int(std::min<std::int64_t>(lines, max));
    l.pages = int((lines + l.height - 1) / l.height);
    // Equal pages: the last one is then at most pages - 1 lines short instead of up to a page.
    l.height = int((lines + l.pages - 1) / l.pages);
    if (l.pages > limits.maxArrayLayers)
        fail(what, ": a ", rows, " x ", cols, " matrix needs ", l.pages, " texture layers of ", max, " x ", max,
             " texels, the GPU allows ", limits.maxArrayLayers);
    return l;
}

}  // namespace gpt2
