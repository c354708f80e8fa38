#include "cpu/cpu_target.h"

#include "cpu/thread_pool.h"

namespace gpt2::cpu {

// Compiled into each build of the CPU library (src/CMakeLists.txt): the macro is that build's own.
std::string targetDescription() {
#if defined(__wasm_simd128__)
    const std::string target = "WebAssembly SIMD";
#elif defined(__EMSCRIPTEN__)
    const std::string target = "WebAssembly without SIMD";
#else
    const std::string target = "native";
#endif
    const int threads = workerCount();
    return "CPU (" + target + ", " + std::to_string(threads) + (threads == 1 ? " thread)" : " threads)");
}

}  // namespace gpt2::cpu
