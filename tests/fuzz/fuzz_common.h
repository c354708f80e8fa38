#pragma once
// Shared by the fuzz targets (tests/fuzz/README.md). Each target file defines its entry point with
// GPT2_FUZZ_ENTRY(name): in the libFuzzer build (GPT2_LIBFUZZER) that is LLVMFuzzerTestOneInput, one
// target per executable; otherwise it is gpt2_fuzz_<name>, so every target links into the one
// fuzz_regression executable that replays the committed corpus under CTest.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#ifdef GPT2_LIBFUZZER
#define GPT2_FUZZ_ENTRY(name) extern "C" int LLVMFuzzerTestOneInput
#else
#define GPT2_FUZZ_ENTRY(name) int gpt2_fuzz_##name
#endif

// An invariant the code under test promises; a violation aborts, which libFuzzer reports as a crash
// (and saves the input) and which fails the regression test.
#define GPT2_FUZZ_CHECK(cond)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                                          \
        }                                                                                          \
    } while (0)
