#pragma once
// What the CPU backend's kernels were built for, as a model's stats name its renderer.
#include <string>

namespace gpt2::cpu {

// "CPU (WebAssembly SIMD, 1 thread)", "CPU (WebAssembly without SIMD, 1 thread)", "CPU (native, 16
// threads)".
std::string targetDescription();

}  // namespace gpt2::cpu
