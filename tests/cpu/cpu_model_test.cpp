// The CPU backend's forward against Hugging Face transformers (the fp32 fixtures, as the GPU path is
// checked) and against the float64 forward over GGUF files' dequantized weights, with the same
// tolerances and reasons as tests/model/fixture_logits_test.cpp and gguf_model_test.cpp. Weights stay
// in their files' formats in memory (StoredMatrix), so the GGUF cases check every block type's
// products.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cpu/cpu_model.h"
#include "format/checkpoint.h"
#include "reference/cpu_reference.h"
#include "support/fixture.h"
#include "support/model_fixture.h"
#include "util/file.h"

namespace gpt2 {
namespace {

using testing::fixturePath;
using testing::maxAbsDiff;

// fp32 products in another order than Hugging Face's: the GPU path stays within 3.6e-6 of it; 1e-4
// still fails a GELU constant of 0.045 for 0.044715 (4.7e-4).
constexpr float kFp32LogitTolerance = 1e-4f;
// Against the float64 forward of the GGUF fixtures (logits up to |46|), as the GPU path.
constexpr float kGgufLogitTolerance = 2e-4f;

int argmax(const std::vector<float>& v) { return int(std::max_element(v.begin(), v.end()) - v.begin()); }

// The greedy continuation of `ids`, one position at a time over the K/V cache.
std::vector<int> greedy(CpuModel& model, std::vector<int> ids, std::size_t count) {
    std::vector<int> out;
    std::vector<float> logits = model.forward(ids, 0);
    while (out.size() < count) {
        out.push_back(argmax(logits));
        logits = model.forward({out.back()}, int(ids.size() + out.size() - 1));
    }
    return out;
}

class CpuFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuFixture, LastLogitsAndGreedyTokensMatchHuggingFace) {
    CpuModel model(openModelOnDisk(fixturePath(GetParam())));
    int prompts = 0;
    for (const auto& prompt : testing::referencePrompts(GetParam())) {
        EXPECT_LE(maxAbsDiff(model.forward(prompt.ids, 0), prompt.lastLogits), kFp32LogitTolerance) << prompt.key;
        EXPECT_EQ(greedy(model, prompt.ids, prompt.greedy.size()), prompt.greedy) << prompt.key;
        ++prompts;
    }
    EXPECT_GT(prompts, 0);
}

INSTANTIATE_TEST_SUITE_P(HuggingFace, CpuFixture, ::testing::Values("gpt2-tiny", "gpt2-variant"),
                         [](const auto& info) { return testing::testName(info.param); });

// kvCache: 'fp16' rounds keys and values to fp16 as they enter the cache and changes nothing else: the
// reference forward with that rounding (tests/reference), within the fp32 tolerance.
TEST(CpuModel, Fp16CacheRoundsKeysAndValuesOnly) {
    CpuModel model(openModelOnDisk(testing::tinyModelDir()), true);
    const HuggingFaceCheckpoint checkpoint(testing::tinyModelDir());
    for (const auto& prompt : testing::tinyPrompts()) {
        const auto rounded = reference::forward(checkpoint, prompt.ids, {.keysValues = true});
        const std::vector<float> want(rounded.logits.end() - std::ptrdiff_t(prompt.lastLogits.size()),
                                      rounded.logits.end());
        EXPECT_LE(maxAbsDiff(model.forward(prompt.ids, 0), want), kFp32LogitTolerance) << prompt.key;
        EXPECT_GT(maxAbsDiff(want, prompt.lastLogits), 0.0f) << prompt.key << ": the rounding shows";
    }
}

class CpuGguf : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuGguf, LastLogitsAndGreedyTokensMatchTheFloat64Forward) {
    CpuModel model(openModelOnDisk(fixturePath("gguf/" + GetParam() + ".gguf")));
    const auto fixture = nlohmann::json::parse(readTextFile(fixturePath("gguf/" + GetParam() + ".json")));
    ASSERT_FALSE(fixture["prompts"].empty());
    for (const auto& prompt : fixture["prompts"]) {
        const auto ids = prompt["ids"].get<std::vector<int>>();
        EXPECT_LE(maxAbsDiff(model.forward(ids, 0), prompt["reference_last_logits"].get<std::vector<float>>()),
                  kGgufLogitTolerance)
            << GetParam();
        // Compared up to the first step whose top two logits are too close to tell apart.
        const auto want = prompt["reference_greedy"].get<std::vector<int>>();
        const auto margins = prompt["reference_greedy_margins"].get<std::vector<float>>();
        std::size_t compared = 0;
        while (compared < want.size() && margins[compared] > 2 * kGgufLogitTolerance) ++compared;
        EXPECT_GE(compared, 2u) << "the fixture's margins leave too little to compare";
        const std::vector<int> got = greedy(model, ids, compared);
        EXPECT_EQ(got, std::vector<int>(want.begin(), want.begin() + std::ptrdiff_t(compared))) << GetParam();
    }
}

INSTANTIATE_TEST_SUITE_P(LlamaCppFiles, CpuGguf, ::testing::ValuesIn(testing::ggufFixtures()),
                         [](const auto& info) { return testing::testName(info.param); });

// Decoding over the cache gives what running the whole sequence again gives.
TEST(CpuModel, DecodingOverTheCacheEqualsRecomputing) {
    CpuModel model(openModelOnDisk(testing::tinyModelDir()));
    const std::vector<int> ids = testing::tinyPrompts().front().ids;
    std::vector<int> longer = ids;
    longer.push_back(7);
    longer.push_back(11);
    const std::vector<float> whole = model.forward(longer, 0);
    model.forward(ids, 0);
    model.forward({7}, int(ids.size()));
    EXPECT_EQ(model.forward({11}, int(ids.size()) + 1), whole);
}

}  // namespace
}  // namespace gpt2
