// The draws of a pass's run (gl/draw_ranges.h) cover exactly the lines that hold its rows, each line
// once, against TensorLayout::forEachRowRect's placement of each row.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "gl/draw_ranges.h"

namespace gpt2 {
namespace {

using Lines = std::set<std::pair<int, int>>;  // (page, line)

Lines linesOfRows(const TensorLayout& l, int begin, int end) {
    Lines lines;
    for (int r = begin; r < end; ++r)
        l.forEachRowRect(r, 1, [&](int page, int, int y, int, int h, std::int64_t) {
            for (int line = y; line < y + h; ++line) lines.insert({page, line});
        });
    return lines;
}

TEST(DrawRanges, CoverExactlyTheLinesOfTheRows) {
    struct Case {
        int rows, cols, lineWidth, interleave, groupRows, maxSize;
    };
    // Unfolded; rows of several lines; lines holding several rows; interleaved pages; row groups;
    // a page limit small enough to spread the rows over several pages.
    for (const Case c : {Case{37, 16, 0, 1, 1, 16384}, Case{37, 768, 32, 1, 1, 16384}, Case{50, 12, 8, 1, 1, 16384},
                         Case{101, 768, 32, 4, 1, 16384}, Case{96, 768, 32, 8, 2, 16384}, Case{64, 64, 8, 8, 8, 16384},
                         Case{300, 256, 16, 2, 2, 64}, Case{257, 36, 0, 1, 1, 40}}) {
        const TensorLayout l = TensorLayout::make(c.rows, c.cols, {c.maxSize, 256}, "x", c.lineWidth, c.interleave);
        for (const auto& [begin, end] : std::vector<std::pair<int, int>>{
                 {0, c.rows},
                 {0, c.groupRows},
                 {c.rows / 2 / c.groupRows * c.groupRows, c.rows / 2 / c.groupRows * c.groupRows + c.groupRows * 3}}) {
            if (end > c.rows) continue;
            Lines drawn;
            forEachDrawRange(l, begin, end, c.groupRows, [&](const DrawRange& d) {
                for (int s = 0; s < c.groupRows; ++s)
                    for (int line = d.line0; line <= d.line1; ++line)
                        EXPECT_TRUE(drawn.insert({d.layer + s, line}).second)
                            << "page " << d.layer + s << " line " << line << " drawn twice";
            });
            EXPECT_EQ(drawn, linesOfRows(l, begin, end))
                << c.rows << " x " << c.cols << ", lines of " << c.lineWidth << ", interleave " << c.interleave
                << ", groups of " << c.groupRows << ", limit " << c.maxSize << ": rows [" << begin << ", " << end
                << ")";
        }
    }
}

}  // namespace
}  // namespace gpt2
