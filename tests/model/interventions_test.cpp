// Interventions (model/interventions.h) against the independent float64 reference applying the same
// list in order (tests/reference): one table of cases, run on the GPU's passes and on the CPU backend,
// fp32 weights within the fp32 tolerance, and fp16 weights on the GPU within fp16's.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "engine/engine.h"
#include "format/checkpoint.h"
#include "reference/cpu_reference.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "util/error.h"

namespace gpt2 {
namespace {

using testing::maxAbsDiff;

// As tests/model/fixture_logits_test.cpp: fp32 sums in other orders stay within 1e-4 of the
// reference; fp16 weights move these logits (up to |12|) by up to 0.01.
constexpr float kFp32Tolerance = 1e-4f;
constexpr float kFp16Tolerance = 0.01f;

// One intervention as the engine takes it and as the reference describes it.
struct Case {
    Intervention engine;
    reference::Intervention reference;
};

std::vector<float> vectorOf(int n, std::uint32_t seed, float scale) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> v(std::size_t(n), 0.0f);
    for (float& x : v) x = normal(rng);
    return v;
}

Case ablateHead(int layer, int head) {
    return {AblateHead{layer, head}, {.kind = "ablateHead", .layer = layer, .head = head}};
}
Case ablateNeurons(int layer, std::vector<int> neurons) {
    return {AblateNeurons{layer, neurons}, {.kind = "ablateNeurons", .layer = layer, .neurons = neurons}};
}
Case steer(int layer, std::vector<float> vector, float scale) {
    return {Steer{layer, vector, scale}, {.kind = "steer", .layer = layer, .vector = vector, .scale = scale}};
}
Case patch(int layer, int position, std::vector<float> vector) {
    return {Patch{layer, position, vector}, {.kind = "patch", .layer = layer, .position = position, .vector = vector}};
}

// Named lists of interventions for the tiny fixture (2 layers, 4 heads, n_embd 32, 128 hidden units).
std::vector<std::pair<std::string, std::vector<Case>>> cases() {
    const int C = 32;
    return {
        {"a head", {ablateHead(1, 2)}},
        {"every head of a layer", {ablateHead(0, 0), ablateHead(0, 1), ablateHead(0, 2), ablateHead(0, 3)}},
        {"neurons", {ablateNeurons(0, {3, 17, 64, 127})}},
        {"steering", {steer(0, vectorOf(C, 1, 1.0f), 2.5f)}},
        {"a patch", {patch(0, 2, vectorOf(C, 2, 3.0f))}},
        {"in list order",
         {steer(1, vectorOf(C, 3, 1.0f), 1.0f), patch(1, 1, vectorOf(C, 4, 3.0f)),
          steer(1, vectorOf(C, 5, 1.0f), -0.5f), ablateHead(0, 1), ablateNeurons(1, {5})}},
    };
}

// A list as the engine takes it and as the reference describes it.
std::pair<std::vector<Intervention>, std::vector<reference::Intervention>> split(const std::vector<Case>& list) {
    std::pair<std::vector<Intervention>, std::vector<reference::Intervention>> out;
    for (const Case& c : list) {
        out.first.push_back(c.engine);
        out.second.push_back(c.reference);
    }
    return out;
}

ModelOptions onBackend(Backend backend, TexelFormat weights) {
    ModelOptions options{weights};
    options.backend = backend;
    return options;
}

std::vector<float> lastRow(const std::vector<float>& rows, std::size_t width) {
    return std::vector<float>(rows.end() - std::ptrdiff_t(width), rows.end());
}

class Interventions : public ::testing::TestWithParam<Backend> {
protected:
    void SetUp() override {
        if (GetParam() == Backend::WebGl) testing::ensureGlContext();
    }
};

// Each list's last logits after a prefill, and after decoding the prompt's last two tokens over the
// cache (the patch and the steering reach the positions run later and the keys and values kept).
TEST_P(Interventions, LogitsMatchTheReference) {
    const HuggingFaceCheckpoint checkpoint(testing::tinyModelDir());
    Engine engine(testing::tinyModelDir(), onBackend(GetParam(), TexelFormat::Float32));
    const std::vector<int>& ids = testing::tinyPrompts().front().ids;
    const std::size_t V = std::size_t(engine.config().vocabSize);
    for (const auto& [name, list] : cases()) {
        const auto [forEngine, forReference] = split(list);
        const auto want = lastRow(reference::forward(checkpoint, ids, {}, forReference).logits, V);
        EXPECT_GT(maxAbsDiff(want, testing::tinyPrompts().front().lastLogits), 1e-3f)
            << name << ": it changes the logits";
        engine.setInterventions(forEngine);
        engine.prefill(ids);
        EXPECT_LE(maxAbsDiff(engine.logits(), want), kFp32Tolerance) << name;
        engine.prefill(std::vector<int>(ids.begin(), ids.end() - 2));
        engine.step(ids[ids.size() - 2]);
        engine.step(ids.back());
        EXPECT_LE(maxAbsDiff(engine.logits(), want), kFp32Tolerance) << name << ", decoded over the cache";
        // Every position of the last block's output: a patched row of it too.
        const auto hidden = reference::forward(checkpoint, ids, {}, forReference).blockOutputs.back();
        EXPECT_LE(maxAbsDiff(engine.hiddenStates(ids, 1), hidden), kFp32Tolerance) << name << ", hidden states";
    }
}

// An empty list runs what no list runs, bit for bit, also after a list is taken away.
TEST_P(Interventions, AnEmptyListChangesNothing) {
    Engine engine(testing::tinyModelDir(), onBackend(GetParam(), TexelFormat::Float32));
    const std::vector<int>& ids = testing::tinyPrompts().front().ids;
    engine.prefill(ids);
    const std::vector<float> plain = engine.logits();
    engine.setInterventions({});
    engine.prefill(ids);
    EXPECT_EQ(engine.logits(), plain);
    for (const auto& [name, list] : cases()) {
        engine.setInterventions(split(list).first);
        engine.prefill(ids);
        engine.setInterventions({});
        engine.prefill(ids);
        EXPECT_EQ(engine.logits(), plain) << "after " << name;
    }
}

// A new list ends the sequence, whose cache holds keys and values made without it.
TEST_P(Interventions, ANewListEndsTheSequence) {
    Engine engine(testing::tinyModelDir(), onBackend(GetParam(), TexelFormat::Float32));
    engine.prefill(testing::tinyPrompts().front().ids);
    engine.setInterventions({AblateHead{0, 0}});
    EXPECT_TRUE(engine.tokens().empty());
    engine.prefill(testing::tinyPrompts().front().ids);
    engine.setInterventions({AblateHead{0, 0}});
    EXPECT_FALSE(engine.tokens().empty()) << "the same list keeps it";
}

// Each item is checked against the model, and the error names it.
TEST_P(Interventions, BadItemsAreRefusedByName) {
    Engine engine(testing::tinyModelDir(), onBackend(GetParam(), TexelFormat::Float32));
    const auto message = [&](const Intervention& item) {
        try {
            engine.setInterventions({AblateHead{0, 0}, item});
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message(AblateHead{2, 0}), "interventions[1].ablateHead: layer 2 is outside [0, 2) (n_layer)");
    EXPECT_EQ(message(AblateHead{0, 4}), "interventions[1].ablateHead: head 4 is outside [0, 4) (n_head)");
    EXPECT_EQ(message(AblateNeurons{0, {128}}),
              "interventions[1].ablateNeurons: neuron 128 is outside [0, 128) (the MLP's inner width)");
    EXPECT_EQ(message(Steer{0, std::vector<float>(31, 0.0f), 1.0f}),
              "interventions[1].steer: vector has 31 values, expected n_embd 32");
    EXPECT_EQ(message(Patch{0, 64, std::vector<float>(32, 0.0f)}),
              "interventions[1].patch: position 64 is outside [0, 64) (n_positions)");
    std::vector<float> nan(32, 0.0f);
    nan[3] = std::nanf("");
    EXPECT_EQ(message(Steer{0, nan, 1.0f}), "interventions[1].steer: vector[3] is nan, not a finite number");
}

INSTANTIATE_TEST_SUITE_P(Backends, Interventions, ::testing::Values(Backend::WebGl, Backend::Cpu),
                         [](const auto& info) { return info.param == Backend::WebGl ? "Gpu" : "Cpu"; });

// fp16 weights on the GPU: within fp16's bound of the reference with the same rounding.
TEST(InterventionsFp16, LogitsMatchTheReferenceWithRoundedWeights) {
    testing::ensureGlContext();
    const HuggingFaceCheckpoint checkpoint(testing::tinyModelDir());
    ModelOptions options{TexelFormat::Float16};
    Engine engine(testing::tinyModelDir(), options);
    const std::vector<int>& ids = testing::tinyPrompts().front().ids;
    for (const auto& [name, list] : cases()) {
        const auto [forEngine, forReference] = split(list);
        const auto want = lastRow(reference::forward(checkpoint, ids, {.weights = true}, forReference).logits,
                                  std::size_t(engine.config().vocabSize));
        engine.setInterventions(forEngine);
        engine.prefill(ids);
        EXPECT_LE(maxAbsDiff(engine.logits(), want), kFp16Tolerance) << name;
    }
}

}  // namespace
}  // namespace gpt2
