#pragma once
// Finding Inf and NaN among a tensor's stored bytes before they go to the GPU, eight bytes at a time:
// checking value by value took a tenth of a large checkpoint's load in wasm.
#include <cstdint>

namespace gpt2 {

// The index of the first of `count` little-endian values, fp16 (`half`) or fp32, whose exponent bits
// are all ones (Inf or NaN); -1 when every one is finite.
std::int64_t firstNonFinite(const std::uint8_t* bytes, std::int64_t count, bool half);

}  // namespace gpt2
