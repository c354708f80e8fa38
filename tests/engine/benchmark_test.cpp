// The benchmark's own numbers (docs/benchmarks.md) on the gpt2-tiny fixture: draws and readback per
// decode step, and a per-pass profile whose entries cover every pass of the step.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "engine/benchmark.h"
#include "format/checkpoint.h"
#include "gl/pass.h"
#include "reference/cpu_reference.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "util/error.h"

namespace gpt2 {
namespace {

// What every row must say, whatever the timings: its counts, timings that are finite and not
// negative, and a JSON row that carries the result's own numbers, the profile's totals the sums of
// its passes.
void expectConsistentRow(const BenchmarkResult& r, int promptTokens, int newTokens, const std::string& where) {
    EXPECT_EQ(r.promptTokens, promptTokens) << where;
    EXPECT_EQ(r.newTokens, newTokens) << where;
    for (const auto& [name, ms] : std::vector<std::pair<const char*, double>>{{"prefill", r.prefillMs},
                                                                              {"decode per token", r.decodeMsPerToken},
                                                                              {"decode first", r.decodeMsFirst},
                                                                              {"decode last", r.decodeMsLast},
                                                                              {"decode latency", r.decodeLatencyMs},
                                                                              {"decode submit", r.decodeSubmitMs}}) {
        EXPECT_TRUE(std::isfinite(ms)) << where << ": " << name;
        EXPECT_GE(ms, 0) << where << ": " << name;
    }
    // A prefill and a decode step read a candidate back from the GPU: each takes some time.
    EXPECT_GT(r.prefillMs, 0) << where;
    EXPECT_GT(r.decodeMsPerToken, 0) << where;
    EXPECT_GT(r.decodeLatencyMs, 0) << where;
    EXPECT_FALSE(r.profilePending) << where << ": natively the profile is read before runBenchmark returns";

    const auto row = nlohmann::json::parse(benchmarkJson(r));
    EXPECT_EQ(row.at("prompt_tokens").get<int>(), promptTokens) << where;
    EXPECT_EQ(row.at("new_tokens").get<int>(), newTokens) << where;
    EXPECT_EQ(row.at("prefill_ms").get<double>(), r.prefillMs) << where;
    EXPECT_EQ(row.at("decode_ms_per_token").get<double>(), r.decodeMsPerToken) << where;
    EXPECT_EQ(row.at("decode_ms_first").get<double>(), r.decodeMsFirst) << where;
    EXPECT_EQ(row.at("decode_ms_last").get<double>(), r.decodeMsLast) << where;
    EXPECT_EQ(row.at("decode_latency_ms").get<double>(), r.decodeLatencyMs) << where;
    EXPECT_EQ(row.at("decode_submit_ms").get<double>(), r.decodeSubmitMs) << where;
    EXPECT_EQ(row.at("passes_per_token").get<double>(), r.passesPerToken) << where;
    EXPECT_EQ(row.at("readback_bytes_per_token").get<double>(), r.readbackBytesPerToken) << where;
    EXPECT_EQ(row.at("gpu_bytes").get<long long>(), r.gpuBytes) << where;
    EXPECT_EQ(row.at("renderer").get<std::string>(), r.renderer) << where;
    EXPECT_FALSE(r.renderer.empty()) << where;
    // Draws are whole numbers per step, the same at every step of a greedy decode.
    EXPECT_EQ(r.passesPerToken, std::round(r.passesPerToken)) << where;
    EXPECT_GT(r.passesPerToken, 0) << where;
    if (r.profileMsPerToken.empty()) {
        EXPECT_FALSE(row.contains("profile_ms_per_token")) << where;
        EXPECT_FALSE(row.contains("profile_total_ms_per_token")) << where;
        return;
    }
    double decodeTotal = 0, prefillTotal = 0;
    for (const auto& [pass, ms] : r.profileMsPerToken) {
        EXPECT_TRUE(std::isfinite(ms)) << where << ": " << pass;
        EXPECT_EQ(row.at("profile_ms_per_token").at(pass).get<double>(), ms) << where << ": " << pass;
        decodeTotal += ms;
    }
    for (const auto& [pass, ms] : r.profilePrefillMs) {
        EXPECT_TRUE(std::isfinite(ms)) << where << ": " << pass;
        prefillTotal += ms;
    }
    EXPECT_EQ(row.at("profile_ms_per_token").size(), r.profileMsPerToken.size()) << where;
    EXPECT_EQ(row.at("profile_prefill_ms").size(), r.profilePrefillMs.size()) << where;
    EXPECT_NEAR(row.at("profile_total_ms_per_token").get<double>(), decodeTotal, 1e-9 * decodeTotal) << where;
    EXPECT_NEAR(row.at("profile_prefill_total_ms").get<double>(), prefillTotal, 1e-9 * prefillTotal) << where;
    EXPECT_EQ(row.at("profile_source").get<std::string>(), r.profileSource) << where;
    EXPECT_EQ(row.at("profile_matmuls").size(), r.profileMatmuls.size()) << where;
    for (const auto& [kind, m] : r.profileMatmuls) {
        const auto& entry = row.at("profile_matmuls").at(kind);
        EXPECT_EQ(entry.at("ms_per_token").get<double>(), m.msPerToken) << where << ": " << kind;
        EXPECT_EQ(entry.at("weights").get<long long>(), m.weights) << where << ": " << kind;
        EXPECT_EQ(entry.at("g_weights_per_s").get<double>(), m.gWeightsPerSecond) << where << ": " << kind;
    }
}

struct PassCase {
    int splitTexels, passPerOutput, rowMomentsInVertex;
};

// Split-K 0 (software renderers' default), with the Q/K/V projection as a pass per output (their
// default) and as one pass, and split-K 8 (GPUs'). Without split-K each LayerNorm is one pass and the
// matmuls fetch their inputs; with it a decode step's LayerNorms are their row moments only,
// normalised by the one-row matmuls after them, whose vertex shaders fetch the inputs (and, with
// rowMomentsInVertex, sum the moments themselves) and write Q, K and V in one pass.
TEST(BenchmarkTest, CountsDrawsAndReadbackPerStepAndProfilesEveryPass) {
    testing::ensureGlContext();
    for (const auto& [split, perOutput, momentsInVertex] :
         std::vector<PassCase>{{0, 1, 0}, {0, 0, 0}, {8, -1, 0}, {8, -1, 1}}) {
        ModelOptions options;
        options.splitTexels = split;
        options.passPerOutput = perOutput;
        options.rowMomentsInVertex = momentsInVertex;
        Engine engine(testing::tinyModelDir(), options);
        if (split > 0 && !engine.capabilities().floatBlend) continue;  // split-K needs float blending
        const BenchmarkResult r = runBenchmark(engine, 5, 3, true);
        expectConsistentRow(r, 5, 3, "split " + std::to_string(split));
        const int layers = engine.config().layers;
        // Per layer 6 passes (8 with K and V in passes of their own) and 2 LayerNorm passes (none
        // where the one-row matmuls sum the moments); then the embedding, the final LayerNorm (the
        // same), lm_head, and 2 top-k passes for one candidate.
        const int layerNormPasses = momentsInVertex == 1 ? 0 : 1;
        EXPECT_EQ(r.passesPerToken, layers * ((perOutput == 1 ? 8 : 6) + 2 * layerNormPasses) + 4 + layerNormPasses)
            << "split " << split << ", moments in vertex " << momentsInVertex;
        EXPECT_EQ(r.readbackBytesPerToken, 16) << "a greedy step reads back one texel";
        EXPECT_GT(r.decodeMsPerToken, 0);
        EXPECT_GE(r.prefillMs, 0);
        EXPECT_EQ(r.gpuBytes, engine.gpuBytes());
        // The row says what the policy chose within: the colour bits a pass may write, as probed.
        const auto row = nlohmann::json::parse(benchmarkJson(r));
        EXPECT_EQ(row.at("color_bits").get<int>(), engine.capabilities().colorBits);
        EXPECT_EQ(row.at("render_targets").get<int>() * kTargetColorBits, row.at("color_bits").get<int>());

        // Every shader of a decode step has an entry; each took some time, and together no more than a
        // generous multiple of a plain step waiting for its token (software renderers are timed by wall clock, since
        // llvmpipe's timer queries are wrong: docs/benchmarks.md, `profile_source`).
        const std::string matmul = split > 0 ? "matmul_row.vert + matmul.frag" : "matmul.frag";
        std::vector<std::string> passes = {"embedding.frag -> residual A", "attention_scores.frag -> attention scores",
                                           "attention_apply.frag -> attention output",
                                           "topk_block.frag -> top-k blocks", "topk_merge.frag -> top-k candidates"};
        // Each matmul pass and the kind of weights it reads: the profile adds up each kind's passes.
        std::map<std::string, std::string> matmulPasses = {{matmul + " -> queries", "attn.c_attn"},
                                                           {matmul + " -> residual B", "attn.c_proj"},
                                                           {matmul + " -> mlp hidden", "mlp.c_fc"},
                                                           {matmul + " -> residual A", "mlp.c_proj"},
                                                           {matmul + " -> logits", "lm_head"}};
        if (momentsInVertex == 0)
            passes.push_back(split > 0 ? "layer_norm_moments.frag -> layernorm moments"
                                       : "layer_norm.frag -> layernorm output");
        if (perOutput == 1)
            for (int layer = 0; layer < layers; ++layer)
                for (const char* cache : {"k", "v"})
                    matmulPasses[matmul + " -> h." + std::to_string(layer) + "." + cache + " cache"] = "attn.c_attn";
        std::map<std::string, double> kindMs;
        for (const auto& [pass, kind] : matmulPasses) {
            passes.push_back(pass);
            kindMs[kind] += r.profileMsPerToken.count(pass) ? r.profileMsPerToken.at(pass) : 0.0;
        }
        for (const std::string& pass : passes) EXPECT_EQ(r.profileMsPerToken.count(pass), 1u) << pass;
        EXPECT_EQ(r.profileMsPerToken.size(), passes.size());
        // Weights per token of each kind: GPT-2's matrices (E x 3E, E x E, E x F, F x E per layer; V x E).
        const ModelConfig& c = engine.config();
        const long long e = c.embedDim, f = c.innerDim;
        const std::map<std::string, long long> weights = {{"attn.c_attn", layers * e * 3 * e},
                                                          {"attn.c_proj", layers * e * e},
                                                          {"mlp.c_fc", layers * e * f},
                                                          {"mlp.c_proj", layers * f * e},
                                                          {"lm_head", c.vocabSize * e}};
        EXPECT_EQ(r.profileMatmuls.size(), weights.size());
        for (const auto& [kind, count] : weights) {
            ASSERT_EQ(r.profileMatmuls.count(kind), 1u) << kind;
            const BenchmarkResult::MatmulProfile& m = r.profileMatmuls.at(kind);
            EXPECT_NEAR(m.msPerToken, kindMs.at(kind), 1e-12 * kindMs.at(kind)) << kind;
            EXPECT_EQ(m.weights, count) << kind;
            EXPECT_NEAR(m.gWeightsPerSecond, count / (kindMs.at(kind) * 1e6), 1e-9 * m.gWeightsPerSecond) << kind;
        }
        double total = 0;
        for (const auto& [pass, ms] : r.profileMsPerToken) {
            EXPECT_GT(ms, 0) << pass;
            total += ms;
        }
        EXPECT_LT(total, 50 * r.decodeLatencyMs);
        // The prompt runs the same shaders (a prompt of 5 tokens, so no decode-only one-row variants
        // where split; its attention works in the chunk's scores, with a pass for their row maxima),
        // and only the final position reaches lm_head.
        for (const char* pass : {"embedding.frag -> residual A", "attention_scores.frag -> chunk attention scores",
                                 "attention_row_max.frag -> chunk attention row maxima",
                                 "attention_apply.frag -> attention output", "topk_merge.frag -> top-k candidates"})
            EXPECT_GT(r.profilePrefillMs.count(pass) ? r.profilePrefillMs.at(pass) : 0.0, 0) << pass;
        const bool software = engine.capabilities().softwareRenderer;
        EXPECT_EQ(r.profileSource,
                  std::string(software || !gpuTimersAvailable() ? "wall clock, each pass waiting for its result"
                                                                : "gpu timer queries"));
    }
}

// The benchmark decodes greedily: after it, the engine's sequence is its prompt (runBenchmark's fixed
// ids) and the tokens it decoded, which must be the CPU reference's greedy continuation of that
// prompt (tests/reference: plain loops, double accumulation; fp32 weights here). The reference's
// margins between its first and second token are asserted well above fp32's error (logits within
// 3.6e-6 of Hugging Face's on this fixture), so an argmax flip would be the engine's fault. Plain
// and profiled runs alike (the profiled one runs the prompt and the steps a second time).
TEST(BenchmarkTest, DecodesTheCpuReferencesGreedyTokens) {
    testing::ensureGlContext();
    Engine engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32});
    const HuggingFaceCheckpoint checkpoint(testing::tinyModelDir());
    const int promptTokens = 6, newTokens = 4;
    // The prompt runBenchmark documents: fixed ids, (i * 7919 + 464) mod the vocabulary.
    std::vector<int> expected;
    for (int i = 0; i < promptTokens; ++i) expected.push_back((i * 7919 + 464) % engine.config().vocabSize);
    for (int step = 0; step < newTokens; ++step) {
        const auto logits = reference::forward(checkpoint, expected).logits;
        const std::size_t vocab = logits.size() / expected.size();
        const std::vector<float> last(logits.end() - std::ptrdiff_t(vocab), logits.end());
        const auto top = testing::topK(last, 2);
        ASSERT_GT(last[std::size_t(top[0])] - last[std::size_t(top[1])], 1e-3f) << "step " << step << ": a near tie";
        expected.push_back(top[0]);
    }
    for (bool profile : {false, true}) {
        const BenchmarkResult r = runBenchmark(engine, promptTokens, newTokens, profile);
        const std::string where = profile ? "profiled" : "plain";
        expectConsistentRow(r, promptTokens, newTokens, where);
        EXPECT_EQ(r.profileMsPerToken.empty(), !profile) << where;
        EXPECT_EQ(engine.tokens(), expected) << where;
    }
    // What it cannot run: no prompt, no decode step, or more than the context (64) holds.
    EXPECT_THROW(runBenchmark(engine, 0, 4), Error);
    EXPECT_THROW(runBenchmark(engine, 4, 0), Error);
    EXPECT_THROW(runBenchmark(engine, 60, 5), Error);
    EXPECT_EQ(runBenchmark(engine, 60, 4).newTokens, 4) << "exactly the context";
}

// Sampling, each run of the benchmark draws the tokens generate() draws with the same options and
// seed: the demo's settings (top-k and top-p among the GPU's candidates, the repetition penalty's seen
// tokens), top-p alone (which the GPU declines where its candidates fall short of p, and the CPU
// sampler then picks from the logits), and on the CPU backend, which draws every token from them.
TEST(BenchmarkTest, SamplesAsGenerateDoes) {
    SamplingOptions demo;
    demo.temperature = 0.8f;
    demo.topK = 40;
    demo.topP = 0.95f;
    demo.repetitionPenalty = 1.2f;
    demo.seed = 11;
    SamplingOptions nucleus;
    nucleus.temperature = 1.0f;
    nucleus.topP = 0.5f;
    nucleus.seed = 5;
    const struct {
        const char* name;
        SamplingOptions sampling;
        Backend backend;
    } cases[] = {{"demo, GPU", demo, Backend::WebGl},
                 {"top-p, GPU", nucleus, Backend::WebGl},
                 {"demo, CPU", demo, Backend::Cpu}};
    const int promptTokens = 6, newTokens = 5;
    for (const auto& c : cases) {
        ModelOptions options{TexelFormat::Float32};
        options.backend = c.backend;
        if (c.backend == Backend::WebGl) testing::ensureGlContext();
        Engine engine(testing::tinyModelDir(), options);
        std::vector<int> expected;
        for (int i = 0; i < promptTokens; ++i) expected.push_back((i * 7919 + 464) % engine.config().vocabSize);
        GenerateOptions generate;
        generate.maxNewTokens = newTokens;
        generate.sampling = c.sampling;
        generate.stopAtEndOfText = false;
        Generation generation(engine, expected, generate);
        while (generation.next()) {
        }
        expected.insert(expected.end(), generation.ids().begin(), generation.ids().end());
        for (bool profile : {false, true}) {
            if (profile && c.backend == Backend::Cpu) continue;  // the CPU runs no passes to profile
            const BenchmarkResult r = runBenchmark(engine, promptTokens, newTokens, profile, c.sampling);
            const std::string where = std::string(c.name) + (profile ? ", profiled" : ", plain");
            if (c.backend == Backend::WebGl) expectConsistentRow(r, promptTokens, newTokens, where);
            EXPECT_EQ(engine.tokens(), expected) << where;
            if (profile && c.sampling.topK) {
                EXPECT_TRUE(r.profileMsPerToken.count("sample_choose.frag -> chosen token")) << where;
            }
        }
    }
    SamplingOptions bad;
    bad.topP = 1.5f;
    testing::ensureGlContext();
    Engine engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32});
    EXPECT_THROW(runBenchmark(engine, 4, 2, false, bad), Error);
}

}  // namespace
}  // namespace gpt2
