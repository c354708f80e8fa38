#pragma once
// The decode/prefill benchmark shared by `gpt2 bench` (native) and the web module (browser bench):
// the same measurements in both builds.
#include <map>
#include <string>

#include "engine/engine.h"

namespace gpt2 {

struct BenchmarkResult {
    int promptTokens = 0;
    int newTokens = 0;
    double prefillMs = 0;         // the prompt's passes and its first token's GPU argmax (time to first token)
    double decodeMsPerToken = 0;  // median over the decode steps (greedy: GPU argmax, 16-byte readback)
    double decodeMsFirst = 0;
    double decodeMsLast = 0;
    // Median CPU time to issue a decode step's passes, before the readback waits for the GPU: near
    // decodeMsPerToken means the driver, not the GPU, sets the pace.
    double decodeSubmitMs = 0;
    double passesPerToken = 0;  // draw calls per decode step
    double readbackBytesPerToken = 0;
    long long gpuBytes = 0;  // texture memory of the model
    std::string renderer;
    int colorBits = 0;      // colour bits one pass may write, as probed (GlCapabilities::colorBits)
    int renderTargets = 0;  // render targets one pass writes at most, within them
    // With profiling: ms per decode token of each pass ("shader -> output"), from a second run, and
    // how they were measured: "gpu timer queries" on hardware GPUs in native builds, else "wall
    // clock, each pass waiting for its result" (then their sum exceeds a plain step).
    std::map<std::string, double> profileMsPerToken;
    std::map<std::string, double> profilePrefillMs;  // the same for the profiled run's prompt, ms in all
    std::string profileSource;
    bool profilePending = false;  // the profiled run's GPU timer results are still to be read
};

// Runs a prompt of `promptTokens` fixed ids, then `newTokens` greedy decode steps (each: one token's
// forward plus the GPU argmax and its 16-byte readback). `profile` adds a second, profiled run of
// the prompt and the decode steps (setPassProfiling); the timings above come from the plain run. In
// a browser with GPU timers the profile is left pending (gpuTimerResultsWaitForTheTask): read it
// with finishBenchmarkProfile in a later task, once benchmarkProfileReady().
BenchmarkResult runBenchmark(Engine& engine, int promptTokens, int newTokens, bool profile = false);
bool benchmarkProfileReady();
void finishBenchmarkProfile(BenchmarkResult& result);
std::string benchmarkJson(const BenchmarkResult& result);

}  // namespace gpt2
