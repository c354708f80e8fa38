// The layout contract: unfolded when it fits, whole rows per line when too tall (or one row per line
// over pages of a power-of-two height, as software renderers ask), lines split when too wide,
// extra pages when one page cannot hold the matrix; never a dimension over the limit.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "gl/tensor_layout.h"
#include "util/error.h"

namespace gpt2 {
namespace {

void expectValid(const TensorLayout& l, int max) {
    EXPECT_LE(l.width, max);
    EXPECT_LE(l.height, max);
    EXPECT_GE(l.pageTexels() * l.pages, l.texelCount());
    EXPECT_LT(l.pageTexels() * (l.pages - 1), l.texelCount());  // no empty page
}

TEST(TensorLayout, SpreadsLinesEvenlyOverPages) {
    // 1024 rows of 768 texels in lines of 32: 24,576 lines. At 16384 that is 2 pages of 12,288
    // lines, not 16,384 + 8,192 with a page allocated for 32,768.
    const auto l = TensorLayout::make(1024, 3072, {16384, 256}, "hidden", 32);
    expectValid(l, 16384);
    EXPECT_EQ(l.pages, 2);
    EXPECT_EQ(l.height, 12288);
}

TEST(TensorLayout, FitsUnfolded) {
    const auto l = TensorLayout::make(1024, 768, {16384, 256}, "x");
    EXPECT_TRUE(l.unfolded());
    EXPECT_EQ(l.width, 192);
    EXPECT_EQ(l.height, 1024);
    EXPECT_EQ(l.pages, 1);
}

TEST(TensorLayout, PadsColumnsToWholeTexels) {
    const auto l = TensorLayout::make(3, 30, {16384, 256}, "x");
    EXPECT_EQ(l.texelsPerRow, 8);
}

TEST(TensorLayout, FoldsTheEmbeddingUnder4096) {
    for (int embd : {768, 1024, 1280}) {
        const auto l = TensorLayout::make(50260, embd, {4096, 256}, "wte");
        expectValid(l, 4096);
        EXPECT_FALSE(l.unfolded());
        EXPECT_EQ(l.width % l.texelsPerRow, 0) << "rows must not be split when they fit in a line";
    }
}

TEST(TensorLayout, SplitsRowsWiderThanTheLimit) {
    const auto l = TensorLayout::make(2, 50260, {8192, 256}, "logits");
    expectValid(l, 8192);
    EXPECT_EQ(l.width, 8192);
}

TEST(TensorLayout, UsesPagesWhenOnePageIsNotEnough) {
    const auto l = TensorLayout::make(50260, 32, {256, 256}, "wte");
    expectValid(l, 256);
    EXPECT_EQ(l.width, 256) << "32 rows of 8 texels per line";
    EXPECT_EQ(l.pages, 7);  // 50260 * 8 texels / 65536 per page
    EXPECT_EQ(l.uniform().w, 0);
}

TEST(TensorLayout, PagedRowsTakeAPowerOfTwoHeight) {
    const auto l = TensorLayout::make(50260, 32, {256, 256, true}, "wte");
    expectValid(l, 256);
    EXPECT_EQ(l.width, 8) << "one row per line";
    EXPECT_EQ(l.height, 256);
    EXPECT_EQ(l.pages, 197);  // ceil(50260 rows / 256 lines per page): 172 empty lines, under 1/16
    EXPECT_EQ(l.uniform().w, TensorLayout::kPagedRowsMode + 8) << "pages of 2^8 lines: shift-and-mask addressing";
    // At 8192, pages of 8192 lines would leave 7,084 of 57,344 lines empty; 4096 leave 2,988 of 53,248.
    const auto big = TensorLayout::make(50260, 768, {8192, 2048, true}, "wte");
    expectValid(big, 8192);
    EXPECT_EQ(big.height, 4096);
    EXPECT_EQ(big.pages, 13);
    // Beyond the layer limit, rows share lines again.
    const auto packed = TensorLayout::make(50260, 32, {256, 64, true}, "wte");
    expectValid(packed, 256);
    EXPECT_EQ(packed.width, 256);
    EXPECT_EQ(packed.pages, 7);
}

TEST(TensorLayout, CapsLinesAtAPowerOfTwoWidthForActivations) {
    const auto l = TensorLayout::make(1024, 768, {16384, 256}, "x", 32);
    expectValid(l, 16384);
    EXPECT_EQ(l.width, 32);
    EXPECT_EQ(l.height, 1024 * 6);
    EXPECT_EQ(l.uniform().w, -5) << "one page of width 2^5: shift-and-mask addressing";
    EXPECT_TRUE(TensorLayout::make(4, 32, {16384, 256}, "x", 32).unfolded()) << "rows that fit a line stay unfolded";
    EXPECT_THROW(TensorLayout::make(4, 400, {16384, 256}, "x", 24), Error);
}

TEST(TensorLayout, RowsOfWholeLinesFillPagesWithWholeRows) {
    // 400 texels per row in lines of 16: 25 lines per row; 10 rows per page of at most 256 lines.
    const auto l = TensorLayout::make(1000, 1600, {256, 256}, "x", 16);
    expectValid(l, 256);
    EXPECT_EQ(l.width, 16);
    EXPECT_EQ(l.height, 250);
    EXPECT_EQ(l.pages, 100);
    EXPECT_TRUE(l.rowsAreWholeLines());
    // Lines that do not divide a row share lines between rows; one row is whole lines regardless.
    EXPECT_FALSE(TensorLayout::make(10, 72, {16384, 256}, "x", 4).rowsAreWholeLines());
    EXPECT_TRUE(TensorLayout::make(1, 50260, {16384, 256}, "logits", 32).rowsAreWholeLines());
    EXPECT_TRUE(TensorLayout::make(10, 72, {16384, 256}, "x").rowsAreWholeLines()) << "unfolded";
}

TEST(TensorLayout, InterleavedRowsShareAPlaceOnConsecutivePages) {
    // 1001 rows over groups of 4 pages: 251 rows per group, each laid out as its own matrix would be.
    const auto l = TensorLayout::make(1001, 768, {16384, 256}, "x", 32, 4);
    const auto group = TensorLayout::make(251, 768, {16384, 256}, "x", 32);
    EXPECT_EQ(l.rows, 1001);
    EXPECT_EQ(l.groupRows(), 251);
    EXPECT_EQ(l.width, group.width);
    EXPECT_EQ(l.height, group.height);
    EXPECT_EQ(l.pages, 4 * group.pages);
    EXPECT_FALSE(l.unfolded());
    EXPECT_EQ(l.uniform().w, group.uniform().w + 2 * TensorLayout::kInterleaveMode) << "2^2 pages per group";
    EXPECT_EQ(TensorLayout::make(8, 16, {16384, 256}, "x", 0, 8).uniform().w, 1 + 3 * TensorLayout::kInterleaveMode)
        << "unfolded groups";

    // Rows 5 and 6: row 1 of the group layout (texels 24 .. 47 in lines of 32), on pages 1 and 2.
    std::vector<std::array<int, 6>> rects;
    l.forEachRowRect(5, 2, [&](int page, int x, int y, int w, int h, std::int64_t offset) {
        rects.push_back({page, x, y, w, h, int(offset)});
    });
    const std::vector<std::array<int, 6>> expected = {{1, 0, 6, 32, 6, 0}, {2, 0, 6, 32, 6, 192}};
    EXPECT_EQ(rects, expected);

    EXPECT_THROW(TensorLayout::make(8, 16, {16384, 256}, "x", 0, 3), Error) << "not a power of two";
    EXPECT_THROW(TensorLayout::make(50260, 768, {16384, 4}, "x", 32, 8), Error) << "8 pages, 4 allowed";
}

TEST(TensorLayout, RejectsMatricesBeyondTheLayerLimit) {
    EXPECT_THROW(TensorLayout::make(50260, 1600, {256, 16}, "wte"), Error);
    EXPECT_THROW(TensorLayout::make(0, 4, {256, 16}, "empty"), Error);
}

}  // namespace
}  // namespace gpt2
