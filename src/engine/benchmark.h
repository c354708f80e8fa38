#pragma once
// The decode/prefill benchmark shared by `gpt2 bench` (native) and the web module (browser bench):
// the same measurements in both builds.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace gpt2 {

struct BenchmarkResult {
    int promptTokens = 0;
    int newTokens = 0;
    // As generation runs (Generation, greedy): the time to the first token, and the decode time per
    // token after it, from the first token's arrival to the last's, each step a step ahead of its
    // readback. What a user's generate() gets.
    double prefillMs = 0;
    double decodeMsPerToken = 0;
    double decodeMsFirst = 0;  // between the first and second tokens' arrivals
    double decodeMsLast = 0;   // between the last two
    // Each step waiting for its token's readback before the next one starts (median): the latency
    // of one step, the GPU idle while the token travels. Not what generation gets.
    double decodeLatencyMs = 0;
    // Median CPU time to issue a decode step's passes, before the readback waits for the GPU: near
    // decodeLatencyMs means the driver, not the GPU, sets the pace.
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
    // The decode step's matmuls by kind (attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj, lm_head): their
    // passes' ms per token (profileMsPerToken's matmul entries, every one in a kind), the weights a
    // token reads (the matrix times the layers) and the rate, G weights/s: what a matmul's shader
    // does per weight shows there, whatever the weights' format.
    struct MatmulProfile {
        double msPerToken = 0;
        long long weights = 0;
        double gWeightsPerSecond = 0;
    };
    std::map<std::string, MatmulProfile> profileMatmuls;
    std::string profileSource;
    bool profilePending = false;  // the profiled run's GPU timer results are still to be read
};

// A prompt of `promptTokens` fixed ids ((i * 7919 + 464) mod the vocabulary), then `newTokens`
// greedy tokens: first as generation runs them (a Generation, <|endoftext|> not stopping it), then
// again a step at a time, each waiting for its token (decodeLatencyMs, the passes and bytes per
// step). `profile` adds a third, profiled run of the prompt and the steps (setPassProfiling); the
// timings above come from the plain runs. Polled like Generation, so that a browser's thread keeps
// handling events and a page's GPU timer results arrive (they come only after the task).
class Benchmark {
public:
    // `sampling`: how every run draws its tokens, as generate() would with them (greedy by default;
    // unseeded, one seed for all three runs).
    Benchmark(Engine& engine, int promptTokens, int newTokens, bool profile, const SamplingOptions& sampling = {});
    ~Benchmark();
    // Advances without waiting for the GPU; true once the result is complete.
    bool poll();
    // Runs to the end, waiting for the GPU (native callers).
    const BenchmarkResult& run();
    const BenchmarkResult& result() const { return result_; }

private:
    // One poll (`wait`: the generation's steps wait for the GPU); true once the result is complete.
    bool advance(bool wait);
    void finishGeneration();
    void runSteps();
    void takeProfile();
    // The token after the last position, draw `draw` of the sampling, read back before it returns.
    int nextToken(int draw);

    Engine& engine_;
    bool profile_;
    Sampler sampler_;            // draws where the GPU does not (the CPU backend, or a top-k it cannot list)
    TokenSampling gpuSampling_;  // the same options as the GPU takes them
    bool runnerDraws_;
    std::vector<int> prompt_;
    std::unique_ptr<Generation> generation_;
    std::chrono::steady_clock::time_point start_;
    std::vector<double> arrivals_;  // ms since start_ at which each token arrived
    BenchmarkResult result_;
};

// The whole benchmark, waiting for the GPU: `gpt2 bench`.
BenchmarkResult runBenchmark(Engine& engine, int promptTokens, int newTokens, bool profile = false,
                             const SamplingOptions& sampling = {});
std::string benchmarkJson(const BenchmarkResult& result);

}  // namespace gpt2
