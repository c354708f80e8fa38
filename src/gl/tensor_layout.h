#pragma once
// The texture layout contract (docs/architecture.md, "Textures"):
// a rows x cols float matrix is padded to whole RGBA texels (4 columns per texel) and laid out
// row-major as one linear run of texels. That run fills pages of width x height texels, the layers
// of a 2D array texture. When a row fits in MAX_TEXTURE_SIZE, a matrix that fits is stored
// unfolded (texel (row, t) at x = t, y = row); a taller one puts a whole number of rows on each
// line, or with TextureLimits::pagedRows one row per line over pages of a power-of-two height.
// A matrix too tall or too wide folds into more texels per line or more pages; the one shader helper
// `fetch` (shaders/fetch.glsl) maps a logical (row, texel) to (x, y, page).
#include <cstdint>
#include <glm/vec4.hpp>

namespace gpt2 {

struct TextureLimits {
    int maxTextureSize = 4096;
    int maxArrayLayers = 256;
    // Matrices taller than a page: one row per line over pages of a power-of-two height (a shift
    // and a mask per fetch, which pays on software renderers) instead of whole rows per line
    // (fewest pages and bytes, which GPUs run faster; docs/benchmarks.md, "What the tuning decides").
    bool pagedRows = false;
};

struct TensorLayout {
    int rows = 0;
    int cols = 0;
    int texelsPerRow = 0;  // ceil(cols / 4)
    int width = 0;         // texels per physical line
    int height = 0;        // physical lines per page
    int pages = 0;

    // `lineWidth` > 0 (a power of two) caps the texels per line: activations use it so that even a
    // single row covers a 2D block of fragments (software rasterisers such as SwiftShader give a
    // one-line draw a single thread and half-empty 2x2 quads).
    static TensorLayout make(int rows, int cols, const TextureLimits& limits, const char* what, int lineWidth = 0);

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
    // general case.
    glm::ivec4 uniform() const;
    static constexpr int kPagedRowsMode = 32;
};

}  // namespace gpt2
