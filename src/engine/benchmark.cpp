#include "engine/benchmark.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "gl/pass.h"
#include "util/error.h"

namespace gpt2 {
namespace {
double millisecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The matmul kind of a profile entry ("shader -> output"), known by the texture its pass writes (as
// Gpt2Model::declareGraph names them: Q, K and V may be passes of their own); empty for other passes.
std::string matmulKind(const std::string& entry) {
    const std::size_t arrow = entry.find(" -> ");
    if (arrow == std::string::npos || entry.substr(0, arrow).find("matmul") == std::string::npos) return "";
    const std::string output = entry.substr(arrow + 4);
    const auto endsWith = [&](const std::string& tail) {
        return output.size() >= tail.size() && output.compare(output.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (output == "queries" || endsWith(" cache")) return "attn.c_attn";
    if (output == "residual B") return "attn.c_proj";
    if (output == "mlp hidden") return "mlp.c_fc";
    if (output == "residual A") return "mlp.c_proj";
    if (output == "logits") return "lm_head";
    fail("bench: the profile's matmul pass ", entry, " writes a texture of no known matmul");
}
}  // namespace

Benchmark::Benchmark(Engine& engine, int promptTokens, int newTokens, bool profile, const SamplingOptions& sampling)
    : engine_(engine),
      profile_(profile),
      sampler_(sampling),
      gpuSampling_(gpuSampling(sampling, engine.config().vocabSize, sampler_.seed())),
      runnerDraws_(runnerDraws(engine.runner(), gpuSampling_)) {
    const int context = engine.config().contextLength;
    if (promptTokens < 1 || newTokens < 1 || promptTokens + newTokens > context)
        fail("bench: need 1 <= prompt tokens, 1 <= new tokens, and their sum <= the context (", context, ")");
    if (profile && std::string(engine.runner().backend()) == "cpu")
        fail("bench: profiling times the GPU's passes; the CPU backend runs none (leave the profile off)");
    result_.promptTokens = promptTokens;
    result_.newTokens = newTokens;
    for (int i = 0; i < promptTokens; ++i) prompt_.push_back((i * 7919 + 464) % engine.config().vocabSize);
    GenerateOptions options;
    options.maxNewTokens = newTokens;
    options.sampling = sampling;
    options.sampling.seed = sampler_.seed();
    options.stopAtEndOfText = false;
    options.slideWindow = false;
    start_ = std::chrono::steady_clock::now();
    generation_ = std::make_unique<Generation>(engine, prompt_, options);
}

Benchmark::~Benchmark() = default;

bool Benchmark::poll() { return advance(false); }

const BenchmarkResult& Benchmark::run() {
    while (!advance(true)) {
    }
    return result_;
}

bool Benchmark::advance(bool wait) {
    if (generation_) {
        if (wait ? generation_->next() : generation_->poll()) arrivals_.push_back(millisecondsSince(start_));
        if (!generation_->done()) return false;
        finishGeneration();
        runSteps();
    }
    if (!result_.profilePending) return true;
    if (!passProfileReady()) return false;
    takeProfile();
    return true;
}

void Benchmark::takeProfile() {
    auto phases = takePassProfile();
    result_.profilePrefillMs = phases["prompt"];
    for (const auto& [pass, ms] : phases["decode"]) result_.profileMsPerToken[pass] = ms / result_.newTokens;
    const ModelConfig& c = engine_.config();
    const long long e = c.embedDim, f = c.innerDim, layers = c.layers;
    const std::map<std::string, long long> weights = {{"attn.c_attn", layers * e * 3 * e},
                                                      {"attn.c_proj", layers * e * e},
                                                      {"mlp.c_fc", layers * e * f},
                                                      {"mlp.c_proj", layers * f * e},
                                                      {"lm_head", c.vocabSize * e}};
    for (const auto& [pass, ms] : result_.profileMsPerToken) {
        const std::string kind = matmulKind(pass);
        if (!kind.empty()) result_.profileMatmuls[kind].msPerToken += ms;
    }
    for (auto& [kind, m] : result_.profileMatmuls) {
        m.weights = weights.at(kind);
        m.gWeightsPerSecond = double(m.weights) / (m.msPerToken * 1e6);
    }
    result_.profilePending = false;
}

void Benchmark::finishGeneration() {
    generation_.reset();
    BenchmarkResult& r = result_;
    if (int(arrivals_.size()) != r.newTokens)
        fail("bench: the generation gave ", arrivals_.size(), " tokens where ", r.newTokens, " were asked for");
    r.prefillMs = arrivals_.front();
    if (r.newTokens > 1) {
        r.decodeMsPerToken = (arrivals_.back() - arrivals_.front()) / (r.newTokens - 1);
        r.decodeMsFirst = arrivals_[1] - arrivals_[0];
        r.decodeMsLast = arrivals_.back() - arrivals_[arrivals_.size() - 2];
    }
}

// The steps one at a time, each reading its token back before the next starts; then the profiled
// run. Reading the candidate waits for the GPU everywhere (glFinish does not wait in browsers).
void Benchmark::runSteps() {
    BenchmarkResult& r = result_;
    engine_.prefill(prompt_);
    int next = nextToken(0);
    std::vector<double> steps, submits;
    const long long drawsBefore = passDraws();
    const auto readBefore = engine_.readbackBytes();
    for (int i = 0; i < r.newTokens; ++i) {
        const auto start = std::chrono::steady_clock::now();
        engine_.step(next);
        submits.push_back(millisecondsSince(start));
        next = nextToken(i + 1);
        steps.push_back(millisecondsSince(start));
    }
    if (r.newTokens == 1) r.decodeMsPerToken = r.decodeMsFirst = r.decodeMsLast = steps.front();
    r.passesPerToken = double(passDraws() - drawsBefore) / r.newTokens;
    r.readbackBytesPerToken = double(engine_.readbackBytes() - readBefore) / r.newTokens;
    std::sort(steps.begin(), steps.end());
    r.decodeLatencyMs = steps[steps.size() / 2];
    std::sort(submits.begin(), submits.end());
    r.decodeSubmitMs = submits[submits.size() / 2];
    r.gpuBytes = engine_.gpuBytes();
    r.renderer = engine_.capabilities().renderer;
    r.colorBits = engine_.capabilities().colorBits;
    r.renderTargets = engine_.capabilities().renderTargets;
    if (!profile_) return;
    // Software renderers run on the CPU, where wall time per pass is exact; llvmpipe's timer
    // queries are wrong (docs/benchmarks.md, `profile_source`).
    const bool timers = gpuTimersAvailable() && !engine_.capabilities().softwareRenderer;
    const PassProfiling mode = timers ? PassProfiling::GpuTimers : PassProfiling::WallClock;
    takePassProfile();
    setPassProfiling(mode, "prompt");
    engine_.prefill(prompt_);
    next = nextToken(0);
    setPassProfiling(mode, "decode");
    for (int i = 0; i < r.newTokens; ++i) {
        engine_.step(next);
        next = nextToken(i + 1);
    }
    setPassProfiling(PassProfiling::Off);
    r.profileSource = timers ? "gpu timer queries" : "wall clock, each pass waiting for its result";
    // A page's GPU timer results arrive only after the task (poll() takes them then).
    r.profilePending = timers && gpuTimerResultsWaitForTheTask();
    if (!r.profilePending) takeProfile();
}

int Benchmark::nextToken(int draw) {
    ModelRunner& runner = engine_.runner();
    if (runnerDraws_) {
        runner.requestToken(gpuSampling_, draw);
        const int id = runner.takeToken();
        if (id >= 0) return id;  // else top-p alone, which the GPU's candidates did not reach
    }
    const std::vector<float> logits = runner.logits();
    std::vector<TokenLogit> all;
    for (std::size_t i = 0; i < logits.size(); ++i) all.push_back({int(i), logits[i]});
    return sampler_.pick(std::move(all), engine_.tokens(), draw);
}

BenchmarkResult runBenchmark(Engine& engine, int promptTokens, int newTokens, bool profile,
                             const SamplingOptions& sampling) {
    return Benchmark(engine, promptTokens, newTokens, profile, sampling).run();
}

std::string benchmarkJson(const BenchmarkResult& r) {
    nlohmann::json json{{"prompt_tokens", r.promptTokens},
                        {"new_tokens", r.newTokens},
                        {"prefill_ms", r.prefillMs},
                        {"decode_ms_per_token", r.decodeMsPerToken},
                        {"decode_ms_first", r.decodeMsFirst},
                        {"decode_ms_last", r.decodeMsLast},
                        {"decode_latency_ms", r.decodeLatencyMs},
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
        nlohmann::json matmuls = nlohmann::json::object();
        for (const auto& [kind, m] : r.profileMatmuls)
            matmuls[kind] = {
                {"ms_per_token", m.msPerToken}, {"weights", m.weights}, {"g_weights_per_s", m.gWeightsPerSecond}};
        json["profile_matmuls"] = matmuls;
    }
    return json.dump();
}

}  // namespace gpt2
