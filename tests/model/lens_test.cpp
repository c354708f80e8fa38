// Looking inside the model: the logit lens and the residual stream after each block,
// against the CPU reference (tests/reference) and against Hugging Face transformers' hidden states
// (tests/fixtures/gpt2-tiny/hidden_states.json, made by make_hidden_states.py beside it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "format/checkpoint.h"
#include "reference/cpu_reference.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

// Probabilities within this of each other are a near-tie: either order is right.
constexpr float kTie = 1e-4f;
constexpr float kProbTolerance = 1e-4f;

// softmax of each row of `logits` [T, V].
std::vector<std::vector<double>> softmaxRows(const std::vector<float>& logits, int T, int V) {
    std::vector<std::vector<double>> out(std::size_t(T), std::vector<double>(std::size_t(V), 0.0));
    for (int t = 0; t < T; ++t) {
        const float* row = &logits[std::size_t(t) * std::size_t(V)];
        const double top = *std::max_element(row, row + V);
        double sum = 0;
        for (int v = 0; v < V; ++v) sum += out[std::size_t(t)][std::size_t(v)] = std::exp(double(row[v]) - top);
        for (double& p : out[std::size_t(t)]) p /= sum;
    }
    return out;
}

// Each lens cell against the reference distribution of its position: every probability the GPU
// reports is the reference's probability of that id, the ids come in the reference's order except
// at near-ties, and the top-1 is the reference's most likely id unless the two best are tied.
void expectCellMatches(const LensCell& cell, const std::vector<double>& reference, const std::string& where) {
    std::vector<int> order(reference.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::partial_sort(order.begin(), order.begin() + 2, order.end(),
                      [&](int a, int b) { return reference[std::size_t(a)] > reference[std::size_t(b)]; });
    if (reference[std::size_t(order[0])] - reference[std::size_t(order[1])] > kTie) {
        EXPECT_EQ(cell.ids.front(), order[0]) << where;
    }
    for (std::size_t r = 0; r < cell.ids.size(); ++r) {
        EXPECT_NEAR(cell.probs[r], reference[std::size_t(cell.ids[r])], kProbTolerance) << where << " rank " << r;
        if (r > 0) {
            EXPECT_LE(cell.probs[r], cell.probs[r - 1] + kTie) << where << " rank " << r;
        }
    }
}

// A fixture, and the policy it runs under: rows per fragment > 1 tiles the lens head over its rows
// as GPUs do; small chunks put several chunks, and batches of lens rows that end inside a row group,
// in one prompt.
struct LensCase {
    std::string fixture;
    int rowsPerFragment = -1;
    int prefillChunk = -1;
};

std::string lensCaseName(const ::testing::TestParamInfo<LensCase>& info) {
    std::string name = info.param.fixture == "gpt2-tiny" ? "tiny" : "demo";
    if (info.param.rowsPerFragment > 0) name += "_tiles" + std::to_string(info.param.rowsPerFragment);
    if (info.param.prefillChunk > 0) name += "_chunk" + std::to_string(info.param.prefillChunk);
    return name;
}

void PrintTo(const LensCase& c, std::ostream* os) {
    *os << c.fixture << ", rows per fragment " << c.rowsPerFragment << ", prefill chunk " << c.prefillChunk;
}

class LensTest : public ::testing::TestWithParam<LensCase> {
protected:
    void SetUp() override { testing::ensureGlContext(); }
    std::string fixture() const { return GetParam().fixture; }
    std::string modelDir() const {
        return fixture() == "gpt2-tiny" ? testing::tinyModelDir() : testing::demoModelDir();
    }
    ModelOptions options() const {
        ModelOptions o{TexelFormat::Float32};
        o.rowsPerFragment = GetParam().rowsPerFragment;
        o.prefillChunk = GetParam().prefillChunk;
        return o;
    }
};

TEST_P(LensTest, MatchesTheCpuReferenceWithFp32Weights) {
    const HuggingFaceCheckpoint checkpoint(modelDir());
    Engine engine(modelDir(), options());
    const ModelConfig& c = engine.config();
    for (const auto& prompt : testing::referencePrompts(fixture())) {
        const int T = int(prompt.ids.size());
        const auto lens = engine.lens(prompt.ids, 5);
        ASSERT_EQ(lens.size(), std::size_t(c.layers));
        const auto reference = reference::forward(checkpoint, prompt.ids);
        for (int l = 0; l < c.layers; ++l) {
            ASSERT_EQ(lens[std::size_t(l)].size(), std::size_t(T));
            const auto probs =
                softmaxRows(reference::head(checkpoint, reference.blockOutputs[std::size_t(l)], T), T, c.vocabSize);
            for (int t = 0; t < T; ++t) {
                const auto& cell = lens[std::size_t(l)][std::size_t(t)];
                ASSERT_EQ(cell.ids.size(), 5u);
                expectCellMatches(cell, probs[std::size_t(t)],
                                  prompt.key + " layer " + std::to_string(l) + " position " + std::to_string(t));
            }
        }
    }
}

// The last layer's lens is the model's own distribution, and the lens leaves the sequence as
// prefill does: the next logits are the prompt's.
TEST_P(LensTest, LastLayerIsTheModelsOutputAndTheSequenceGoesOn) {
    Engine engine(modelDir(), options());
    for (const auto& prompt : testing::referencePrompts(fixture())) {
        const auto lens = engine.lens(prompt.ids, 3);
        const auto logits = engine.logits();
        EXPECT_LE(testing::maxAbsDiff(logits, prompt.lastLogits), 1e-3f) << prompt.key;
        const auto& last = lens.back().back();
        EXPECT_EQ(last.ids.front(), int(std::max_element(logits.begin(), logits.end()) - logits.begin())) << prompt.key;
        EXPECT_EQ(engine.tokens(), prompt.ids);
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LensTest,
                         ::testing::Values(LensCase{"gpt2-tiny"}, LensCase{"brown-demo"}, LensCase{"gpt2-tiny", 8, 5},
                                           LensCase{"brown-demo", 4, 7}),
                         lensCaseName);

nlohmann::json huggingFaceHiddenStates() {
    return nlohmann::json::parse(readTextFile(testing::fixturePath("gpt2-tiny/hidden_states.json")));
}

TEST(HiddenStates, MatchHuggingFaceAfterEveryBlock) {
    testing::ensureGlContext();
    Engine engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32});
    const nlohmann::json fixture = huggingFaceHiddenStates();
    float worst = 0;
    for (const auto& [key, prompt] : fixture["prompts"].items()) {
        const auto ids = prompt["ids"].get<std::vector<int>>();
        for (int l = 0; l < engine.config().layers; ++l) {
            const std::vector<float> states = engine.hiddenStates(ids, l);
            std::vector<float> expected;
            for (const auto& row : prompt["block_outputs"][std::size_t(l)]) {
                const auto values = row.get<std::vector<float>>();
                expected.insert(expected.end(), values.begin(), values.end());
            }
            ASSERT_EQ(states.size(), expected.size()) << key;
            const float diff = testing::maxAbsDiff(states, expected);
            EXPECT_LE(diff, 1e-4f) << key << " layer " << l;
            worst = std::max(worst, diff);
        }
    }
    std::cout << "[ measured ] hidden states against Hugging Face: max |diff| " << worst << "\n";
}

TEST(HiddenStates, LensAgreesWithHuggingFace) {
    testing::ensureGlContext();
    Engine engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32});
    const nlohmann::json fixture = huggingFaceHiddenStates();
    for (const auto& [key, prompt] : fixture["prompts"].items()) {
        const auto lens = engine.lens(prompt["ids"].get<std::vector<int>>(), 5);
        for (std::size_t l = 0; l < lens.size(); ++l)
            for (std::size_t t = 0; t < lens[l].size(); ++t) {
                const auto& hf = prompt["lens_top5"][l][t];
                const auto ids = hf["ids"].get<std::vector<int>>();
                const auto probs = hf["probs"].get<std::vector<float>>();
                const std::string where = key + " layer " + std::to_string(l) + " position " + std::to_string(t);
                for (std::size_t r = 0; r < 5; ++r) {
                    EXPECT_NEAR(lens[l][t].probs[r], probs[r], kProbTolerance) << where;
                    // Ids may swap only where Hugging Face's own probabilities tie.
                    const bool tied =
                        (r > 0 && probs[r - 1] - probs[r] <= kTie) || (r < 4 && probs[r] - probs[r + 1] <= kTie);
                    if (!tied) {
                        EXPECT_EQ(lens[l][t].ids[r], ids[r]) << where << " rank " << r;
                    }
                }
            }
    }
}

TEST(HiddenStates, RefuseLayersAndTopKOutsideTheirRange) {
    testing::ensureGlContext();
    Engine engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32});
    const std::vector<int> ids = {1, 2, 3};
    auto expectError = [](auto&& f, const std::string& fragment) {
        try {
            f();
            ADD_FAILURE() << "no error; expected \"" << fragment << "\"";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        }
    };
    expectError([&] { engine.hiddenStates(ids, 2); }, "hiddenStates: layer 2 outside [0, 2)");
    expectError([&] { engine.hiddenStates(ids, -1); }, "hiddenStates: layer -1 outside [0, 2)");
    expectError([&] { engine.lens(ids, 65); }, "lens: top-k must be in [1, 64], got 65");
    expectError([&] { engine.lens({}, 5); }, "lens: the prompt has no tokens");
    EXPECT_EQ(engine.lens(ids, 0).front().front().ids.size(), std::size_t(Lens::kDefaultTopK));
}

}  // namespace
}  // namespace gpt2

namespace gpt2 {
namespace {

// Live views: a generation that captures the lens and one layer's attention hands out, with each
// token, what the positions run for it captured: the prompt's positions with the first token, then
// one position per token (the one that predicted it). They equal the lens and attention of the whole
// sequence computed afterwards, so nothing had to run twice. Decode steps over blocks of 8 keys
// (flash-decoding, as GPUs run long contexts) capture the same attention.
TEST(LiveViews, CapturedDuringGenerationEqualTheLensAndAttentionOfTheSequence) {
    testing::ensureGlContext();
    ModelOptions blocksOfKeys{TexelFormat::Float32};
    blocksOfKeys.attentionBlockKeys = 8;
    const std::vector<std::pair<ModelOptions, bool>> cases = {{ModelOptions{TexelFormat::Float32}, true},
                                                              {ModelOptions{TexelFormat::Float32}, false},
                                                              {blocksOfKeys, true},
                                                              {blocksOfKeys, false}};
    for (const auto& [modelOptions, greedy] : cases) {
        Engine engine(testing::tinyModelDir(), modelOptions);
        const auto& prompt = testing::tinyPrompts()[1];
        const int P = int(prompt.ids.size()), heads = engine.config().heads;
        GenerateOptions options;
        options.maxNewTokens = 10;
        options.stopAtEndOfText = false;
        options.capture = {5, 1};
        if (!greedy) {
            options.sampling.temperature = 0.8f;
            options.sampling.seed = 7;
        }
        Generation generation(engine, prompt.ids, options);
        std::vector<int> sequence = prompt.ids;
        std::vector<CapturedPosition> captured;
        while (auto token = generation.next()) {
            const int first = token->captured.empty() ? -1 : token->captured.front().position;
            EXPECT_EQ(first, captured.empty() ? 0 : int(sequence.size()) - 1);
            EXPECT_EQ(token->captured.back().position, int(sequence.size()) - 1)
                << "the position that predicted the token";
            for (auto& c : token->captured) captured.push_back(std::move(c));
            sequence.push_back(token->id);
        }
        sequence.pop_back();  // the last token never ran
        ASSERT_EQ(captured.size(), sequence.size());
        const auto lens = engine.lens(sequence, 5);
        const auto attention = engine.attention(1);
        const int T = int(sequence.size());
        for (int p = 0; p < T; ++p) {
            const auto& c = captured[std::size_t(p)];
            ASSERT_EQ(c.position, p);
            for (std::size_t l = 0; l < lens.size(); ++l) {
                EXPECT_EQ(c.lens[l].ids, lens[l][std::size_t(p)].ids) << "position " << p << " layer " << l;
                EXPECT_LE(testing::maxAbsDiff(c.lens[l].probs, lens[l][std::size_t(p)].probs), 1e-5f)
                    << "position " << p;
            }
            ASSERT_EQ(c.attention.size(), std::size_t(heads) * (p + 1));
            for (int h = 0; h < heads; ++h) {
                const auto row = attention.begin() + (std::int64_t(h) * T + p) * T;
                const std::vector<float> expected(row, row + p + 1);
                const std::vector<float> got(c.attention.begin() + std::int64_t(h) * (p + 1),
                                             c.attention.begin() + std::int64_t(h + 1) * (p + 1));
                EXPECT_LE(testing::maxAbsDiff(got, expected), 1e-5f) << "position " << p << " head " << h;
            }
        }
        EXPECT_GE(T, P + 9);
    }
}

// lensPositions: a prompt's positions before its last N get no lens (their attention is still
// captured), every later one does, and those equal the lens of the sequence. At k = 40 the block
// lists hold 3 rows: a scored batch takes several searches.
TEST(LiveViews, TheLensCoversThePromptsLastPositionsAndEveryStep) {
    testing::ensureGlContext();
    Engine engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32});
    const auto& prompt = testing::tinyPrompts()[1];
    const int P = int(prompt.ids.size()), N = 6, k = 40;
    GenerateOptions options;
    options.maxNewTokens = 4;
    options.stopAtEndOfText = false;
    options.capture = {k, 0, N};
    Generation generation(engine, prompt.ids, options);
    std::vector<int> sequence = prompt.ids;
    std::vector<CapturedPosition> captured;
    while (auto token = generation.next()) {
        for (auto& c : token->captured) captured.push_back(std::move(c));
        sequence.push_back(token->id);
    }
    sequence.pop_back();
    ASSERT_EQ(captured.size(), sequence.size());
    const auto lens = engine.lens(sequence, k);
    for (int p = 0; p < int(sequence.size()); ++p) {
        const auto& c = captured[std::size_t(p)];
        EXPECT_EQ(c.attention.size(), std::size_t(engine.config().heads) * (p + 1)) << "position " << p;
        if (p < P - N) {
            EXPECT_TRUE(c.lens.empty()) << "position " << p << " is before the prompt's last " << N;
            continue;
        }
        ASSERT_EQ(c.lens.size(), lens.size()) << "position " << p;
        for (std::size_t l = 0; l < lens.size(); ++l) {
            EXPECT_EQ(c.lens[l].ids, lens[l][std::size_t(p)].ids) << "position " << p << " layer " << l;
            EXPECT_LE(testing::maxAbsDiff(c.lens[l].probs, lens[l][std::size_t(p)].probs), 1e-5f) << "position " << p;
        }
    }
}

TEST(LiveViews, OffByDefaultAndRefusedOutsideTheModel) {
    testing::ensureGlContext();
    Engine engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32});
    GenerateOptions options;
    options.maxNewTokens = 3;
    Generation plain(engine, {1, 2, 3}, options);
    while (auto token = plain.next()) EXPECT_TRUE(token->captured.empty());
    // A live generation's capture ends with it: what runs next pays nothing for it.
    options.capture = {3, 0};
    {
        Generation live(engine, {1, 2, 3}, options);
        while (auto token = live.next()) EXPECT_FALSE(token->captured.empty());
    }
    EXPECT_EQ(engine.runner().capture().lensTopK, 0);
    EXPECT_EQ(engine.runner().capture().attentionLayer, -1);
    options.capture = {0, 2};
    try {
        Generation generation(engine, {1, 2, 3}, options);
        ADD_FAILURE() << "attention of layer 2 of 2 captured";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("capture: attention layer 2 outside [0, 2)"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace gpt2
