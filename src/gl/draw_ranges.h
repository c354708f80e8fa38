#pragma once
// Which draws cover a run of rows of an output texture: row r of a layout interleaved over R pages
// is row r / R of its page group's layout, on the group's page r % R. A draw covers one page (and,
// for row groups, the pages after it that its groups fill) and the physical lines that hold the
// requested rows of that page; the shader discards the fragments of other rows.
#include <vector>

#include "gl/tensor_layout.h"

namespace gpt2 {

struct DrawRange {
    int layer;         // the page drawn (the first of a row group's)
    int line0, line1;  // lines [line0, line1] of it, inclusive
};

// The draws of stored rows [storedBegin, storedEnd) (rows of pairs count once), each fragment
// writing `groupRows` consecutive pages.
std::vector<DrawRange> drawRanges(const TensorLayout& out, int storedBegin, int storedEnd, int groupRows);

}  // namespace gpt2
