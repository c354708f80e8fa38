#include "gl/draw_ranges.h"

#include <algorithm>
#include <cstdint>

namespace gpt2 {

namespace {
int floorDiv(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int ceilDiv(int a, int b) { return -floorDiv(-a, b); }
}  // namespace

std::vector<DrawRange> drawRanges(const TensorLayout& out, int storedBegin, int storedEnd, int groupRows) {
    std::vector<DrawRange> draws;
    const int R = out.interleave;
    for (int phase = 0; phase < R; phase += groupRows) {
        const int g0 = ceilDiv(storedBegin - phase, R), g1 = floorDiv(storedEnd - 1 - phase, R);  // rows g * R + phase
        if (g0 > g1) continue;
        const int firstLine = int(std::int64_t(g0) * out.texelsPerRow / out.width);
        const int lastLine = int((std::int64_t(g1 + 1) * out.texelsPerRow - 1) / out.width);
        for (int page = firstLine / out.height; page <= lastLine / out.height; ++page)
            draws.push_back({page * R + phase, std::max(firstLine - page * out.height, 0),
                             std::min(lastLine - page * out.height, out.height - 1)});
    }
    return draws;
}

}  // namespace gpt2
