// The bundled demo model (web/models/brown-demo, trained by weights-tools/demo-model) against Hugging
// Face transformers run on the same committed fp16 weights (tests/fixtures/brown-demo/README.md).
// Its weights are stored in fp16, so fp16 textures hold them exactly: one tolerance for both.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"

namespace gpt2 {
namespace {

class DemoModelTest : public ::testing::TestWithParam<TexelFormat> {};

TEST_P(DemoModelTest, MatchesHuggingFace) {
    testing::ensureGlContext();
    ModelOptions options{GetParam(), 0};
    options.halfPromptInputs = 0;  // fp32 activations: the fp16 weights are exact, so is everything else
    Engine engine(testing::demoModelDir(), options);
    for (const auto& prompt : testing::referencePrompts("brown-demo")) {
        EXPECT_EQ(engine.tokenizer().encode(engine.tokenizer().decode(prompt.ids)), prompt.ids);
        engine.prefill(prompt.ids);
        const auto logits = engine.logits();
        const float diff = testing::maxAbsDiff(logits, prompt.lastLogits);
        EXPECT_LE(diff, 5e-4f) << prompt.key;  // measured at most 2.0e-5 on llvmpipe: a margin of 25
        EXPECT_EQ(testing::topK(logits, 5), prompt.top5Ids.back()) << prompt.key;
        std::cout << "[ measured ] brown-demo " << prompt.key << " max |dlogit| = " << diff << "\n";
        EXPECT_EQ(engine.generateGreedy(prompt.ids, int(prompt.greedy.size())), prompt.greedy) << prompt.key;
    }
}

INSTANTIATE_TEST_SUITE_P(Weights, DemoModelTest, ::testing::Values(TexelFormat::Float32, TexelFormat::Float16),
                         [](const auto& info) {
                             return std::string(info.param == TexelFormat::Float32 ? "fp32" : "fp16");
                         });

}  // namespace
}  // namespace gpt2
