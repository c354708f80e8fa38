#include "engine/benchmark.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "gl/pass.h"
#include "model/next_token.h"
#include "util/error.h"

namespace gpt2 {
namespace {
double millisecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

BenchmarkResult runBenchmark(Engine& engine, int promptTokens, int newTokens, bool profile) {
    const int context = engine.config().contextLength;
    if (promptTokens < 1 || newTokens < 1 || promptTokens + newTokens > context)
        fail("bench: need 1 <= prompt tokens, 1 <= new tokens, and their sum <= the context (", context, ")");
    BenchmarkResult r;
    r.promptTokens = promptTokens;
    r.newTokens = newTokens;
    std::vector<int> prompt;
    for (int i = 0; i < promptTokens; ++i) prompt.push_back((i * 7919 + 464) % engine.config().vocabSize);

    Gpt2Model& model = engine.model();
    // glFinish does not wait in browsers; reading back the first token's candidate does, everywhere.
    auto start = std::chrono::steady_clock::now();
    engine.prefill(prompt);
    int next = model.next().topCandidates(1).front().id;
    r.prefillMs = millisecondsSince(start);

    std::vector<double> steps, submits;
    const long long drawsBefore = passDraws();
    const auto readBefore = model.readbackBytes();
    for (int i = 0; i < newTokens; ++i) {
        start = std::chrono::steady_clock::now();
        engine.step(next);
        submits.push_back(millisecondsSince(start));
        next = model.next().topCandidates(1).front().id;  // reading the candidate waits for the GPU
        steps.push_back(millisecondsSince(start));
    }
    r.decodeMsFirst = steps.front();
    r.decodeMsLast = steps.back();
    r.passesPerToken = double(passDraws() - drawsBefore) / newTokens;
    r.readbackBytesPerToken = double(model.readbackBytes() - readBefore) / newTokens;
    std::sort(steps.begin(), steps.end());
    r.decodeMsPerToken = steps[steps.size() / 2];
    std::sort(submits.begin(), submits.end());
    r.decodeSubmitMs = submits[submits.size() / 2];
    r.gpuBytes = model.gpuBytes();
    r.renderer = model.capabilities().renderer;
    r.colorBits = model.capabilities().colorBits;
    r.renderTargets = model.capabilities().renderTargets;
    if (profile) {
        // Software renderers run on the CPU, where wall time per pass is exact; llvmpipe's timer
        // queries are wrong (docs/benchmarks.md, `profile_source`).
        const bool timers = gpuTimersAvailable() && !model.capabilities().softwareRenderer;
        const PassProfiling mode = timers ? PassProfiling::GpuTimers : PassProfiling::WallClock;
        takePassProfile();
        setPassProfiling(mode, "prompt");
        engine.prefill(prompt);
        next = model.next().topCandidates(1).front().id;
        setPassProfiling(mode, "decode");
        for (int i = 0; i < newTokens; ++i) {
            engine.step(next);
            next = model.next().topCandidates(1).front().id;
        }
        setPassProfiling(PassProfiling::Off);
        r.profileSource = timers ? "gpu timer queries" : "wall clock, each pass waiting for its result";
        r.profilePending = true;
        if (!timers || !gpuTimerResultsWaitForTheTask()) finishBenchmarkProfile(r);
    }
    return r;
}

bool benchmarkProfileReady() { return passProfileReady(); }

void finishBenchmarkProfile(BenchmarkResult& r) {
    if (!r.profilePending) return;
    auto phases = takePassProfile();
    r.profilePrefillMs = phases["prompt"];
    for (const auto& [pass, ms] : phases["decode"]) r.profileMsPerToken[pass] = ms / r.newTokens;
    r.profilePending = false;
}

std::string benchmarkJson(const BenchmarkResult& r) {
    nlohmann::json json{{"prompt_tokens", r.promptTokens},
                        {"new_tokens", r.newTokens},
                        {"prefill_ms", r.prefillMs},
                        {"decode_ms_per_token", r.decodeMsPerToken},
                        {"decode_ms_first", r.decodeMsFirst},
                        {"decode_ms_last", r.decodeMsLast},
                        {"decode_submit_ms", r.decodeSubmitMs},
                        {"passes_per_token", r.passesPerToken},
                        {"readback_bytes_per_token", r.readbackBytesPerToken},
                        {"gpu_bytes", r.gpuBytes},
                        {"renderer", r.renderer},
                        {"color_bits", r.colorBits},
                        {"render_targets", r.renderTargets}};
    if (!r.profileMsPerToken.empty()) {
        double total = 0;
        for (const auto& [pass, ms] : r.profileMsPerToken) total += ms;
        json["profile_ms_per_token"] = r.profileMsPerToken;
        json["profile_total_ms_per_token"] = total;
        double prefillTotal = 0;
        for (const auto& [pass, ms] : r.profilePrefillMs) prefillTotal += ms;
        json["profile_prefill_ms"] = r.profilePrefillMs;
        json["profile_prefill_total_ms"] = prefillTotal;
        json["profile_source"] = r.profileSource;
    }
    return json.dump();
}

}  // namespace gpt2
