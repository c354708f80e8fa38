#pragma once
// Which draws cover a run of rows of an output texture: row r of a layout interleaved over R pages
// is row r / R of its page group's layout, on the group's page r % R. A draw covers one page (and,
// for row groups, the pages after it that its groups fill) and the physical lines that hold the
// requested rows of that page; the shader discards the fragments of other rows.
#include <algorithm>
#include <cstdint>

#include "gl/tensor_layout.h"

namespace gpt2 {

struct DrawRange {
    int layer;         // the page drawn (the first of a row group's)
    int line0, line1;  // lines [line0, line1] of it, inclusive
};

// Calls draw(DrawRange) for each draw of stored rows [storedBegin, storedEnd) (rows of pairs count
// once), each fragment writing `groupRows` consecutive pages. A callback, not a list: Pass::run asks
// this for every pass of every token.
template <typename Draw>
void forEachDrawRange(const TensorLayout& out, int storedBegin, int storedEnd, int groupRows, Draw&& draw) {
    const auto floorDiv = [](int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
    const int R = out.interleave;
    for (int phase = 0; phase < R; phase += groupRows) {
        // Rows g * R + phase for g in [g0, g1].
        const int g0 = -floorDiv(phase - storedBegin, R), g1 = floorDiv(storedEnd - 1 - phase, R);
        if (g0 > g1) continue;
        const int firstLine = int(std::int64_t(g0) * out.texelsPerRow / out.width);
        const int lastLine = int((std::int64_t(g1 + 1) * out.texelsPerRow - 1) / out.width);
        for (int page = firstLine / out.height; page <= lastLine / out.height; ++page)
            draw(DrawRange{page * R + phase, std::max(firstLine - page * out.height, 0),
                           std::min(lastLine - page * out.height, out.height - 1)});
    }
}

}  // namespace gpt2
