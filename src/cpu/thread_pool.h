#pragma once
// Splits a loop over the CPU's cores: natively and in a wasm build with threads, one worker per
// core; in a wasm build without threads (a page that is not cross-origin isolated) the calling
// thread runs it all.
#include <functional>

namespace gpt2::cpu {

// Runs body(begin, end) over [0, count) in about equal contiguous parts, one per worker, and returns
// once all have. Parts are multiples of `grain` (but the last).
void parallelFor(int count, int grain, const std::function<void(int begin, int end)>& body);
// The workers parallelFor uses.
int workerCount();

}  // namespace gpt2::cpu
