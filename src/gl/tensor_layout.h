#pragma once
// The texture layout contract (docs/architecture.md, "Textures"):
// a rows x cols float matrix is padded to whole RGBA texels (4 columns per texel) and laid out
// row-major as one linear run of texels. That run fills pages of width x height texels, the layers
// of a 2D array texture. When a row fits in MAX_TEXTURE_SIZE, a matrix that fits is stored
// unfolded (texel (row, t) at x = t, y = row); a taller one puts a whole number of rows on each
// line, or with TextureLimits::pagedRows one row per line over pages of a power-of-two height.
// A matrix too tall or too wide folds into more texels per line or more pages; the one shader helper
// `fetch` (shaders/fetch.glsl) maps a logical (row, texel) to (x, y, page).
// Rows can also be interleaved over pages (TensorLayout::interleave), so that a fragment writes a
// group of consecutive rows at one (x, y) through multiple render targets (row-tiled matmuls).
#include <algorithm>
#include <cstdint>
#include <glm/vec4.hpp>

namespace gpt2 {

struct TextureLimits {
    int maxTextureSize = 4096;
    int maxArrayLayers = 256;
    // Matrices taller than a page: one row per line over pages of a power-of-two height (a shift
    // and a mask per fetch, which pays on software renderers) instead of whole rows per line
    // (fewest pages and bytes, which GPUs run faster; docs/architecture.md, "What the tuning decides").
    bool pagedRows = false;
};

struct TensorLayout {
    int rows = 0;
    int cols = 0;
    int texelsPerRow = 0;  // ceil(cols / 4)
    int width = 0;         // texels per physical line
    int height = 0;        // physical lines per page
    int pages = 0;         // all of them, interleave x those of one group's rows
    // Rows r with the same r / interleave share a place (x, y) on `interleave` consecutive pages:
    // row r is row r / interleave of the layout that width and height describe over
    // pages / interleave pages, and its page p of that layout is page p * interleave + r % interleave.
    int interleave = 1;

    // `lineWidth` > 0 (a power of two) caps the texels per line: activations use it so that even a
    // single row covers a 2D block of fragments (software rasterisers such as SwiftShader give a
    // one-line draw a single thread and half-empty 2x2 quads). `interleave` is a power of two.
    static TensorLayout make(int rows, int cols, const TextureLimits& limits, const char* what, int lineWidth = 0,
                             int interleave = 1);

    // Rows of the layout that width and height describe: of one interleaved page group.
    int groupRows() const { return (rows + interleave - 1) / interleave; }
    std::int64_t texelCount() const { return std::int64_t(rows) * texelsPerRow; }
    std::int64_t pageTexels() const { return std::int64_t(width) * height; }
    bool unfolded() const { return pages == 1 && width == texelsPerRow; }
    // Every line holds texels of one row only (or there is one row): a scissored clear of a row
    // range's lines then touches nothing else (split-K passes clear before they blend).
    bool rowsAreWholeLines() const {
        return rows == 1 || (texelsPerRow % width == 0 && height % (texelsPerRow / width) == 0);
    }
    // For the shaders: (texelsPerRow, width, height, mode): mode 1 unfolded; -s one page of width
    // 2^s; kPagedRowsMode + s one row per line, pages of 2^s lines (both shift and mask); 0 the
    // general case; plus kInterleaveMode * log2(interleave).
    glm::ivec4 uniform() const;
    static constexpr int kPagedRowsMode = 32;
    static constexpr int kInterleaveMode = 128;

    // Visits the texels of rows [row0, row0 + rowCount) as rectangles of one page each (a part of a
    // line, or whole lines): fn(page, x, y, w, h, offset), offset counting texels from row0's first.
    template <typename Fn>
    void forEachRowRect(int row0, int rowCount, Fn fn) const;
};

// Visits each run of texels of [begin, begin + count) that is one rectangle of a page: a part of a
// line, or whole lines. fn(page, x, y, w, h, offsetInRun).
template <typename Fn>
void forEachTexelRect(std::int64_t begin, std::int64_t count, int width, int height, Fn fn) {
    const std::int64_t pageTexels = std::int64_t(width) * height;
    std::int64_t done = 0;
    while (done < count) {
        const std::int64_t at = begin + done;
        const int page = int(at / pageTexels);
        const std::int64_t inPage = at % pageTexels;
        const int y = int(inPage / width), x = int(inPage % width);
        const std::int64_t left = count - done;
        if (x != 0 || left < width) {
            const int w = int(std::min<std::int64_t>(left, width - x));
            fn(page, x, y, w, 1, done);
            done += w;
        } else {
            const int h = int(std::min<std::int64_t>(left / width, height - y));
            fn(page, 0, y, width, h, done);
            done += std::int64_t(h) * width;
        }
    }
}

template <typename Fn>
void TensorLayout::forEachRowRect(int row0, int rowCount, Fn fn) const {
    const std::int64_t texels = texelsPerRow;
    if (interleave == 1) return forEachTexelRect(row0 * texels, rowCount * texels, width, height, fn);
    // A row at a time: consecutive rows lie on different pages.
    for (int r = row0; r < row0 + rowCount; ++r)
        forEachTexelRect((r / interleave) * texels, texels, width, height,
                         [&](int page, int x, int y, int w, int h, std::int64_t offset) {
                             fn(page * interleave + r % interleave, x, y, w, h, (r - row0) * texels + offset);
                         });
}

}  // namespace gpt2
