// int8 weights (TexelFormat::Int8Quads, quantized at load with a scale per output channel): their
// cost in quality, measured by perplexity on held-out text and greedy agreement, and in memory. The
// op-case table (op_cases_test.cpp) checks each int8 matmul against the reference on the values the
// GPU holds; these check what quantization itself costs.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "util/file.h"
#include "weights-tools/synthetic_checkpoint.h"

namespace gpt2 {
namespace {

TEST(Int8Weights, PerplexityOnHeldOutBrownTextWithinTwoPercentOfFp32) {
    testing::ensureGlContext();
    const std::string text = readTextFile(testing::fixturePath("brown-heldout/ca19-opening.txt"));
    double perplexity[3] = {};
    const TexelFormat formats[3] = {TexelFormat::Float32, TexelFormat::Float16, TexelFormat::Int8Quads};
    for (int i = 0; i < 3; ++i) {
        Engine engine(testing::demoModelDir(), ModelOptions{formats[i]});
        perplexity[i] = engine.perplexity(engine.tokenizer().encode(text)).perplexity;
    }
    EXPECT_LE(perplexity[2], 1.02 * perplexity[0]);
    std::cout << "[ measured ] brown-demo, held-out ca19: perplexity fp32 " << perplexity[0] << ", fp16 "
              << perplexity[1] << ", int8 " << perplexity[2] << " (int8 / fp32 " << perplexity[2] / perplexity[0]
              << ")\n";
}

TEST(Int8Weights, TakeAtMost055OfTheGpuBytesOfFp16) {
    testing::ensureGlContext();
    const TextureLimits limits = queryCapabilities().limits;
    for (const ModelConfig& config :
         {Engine(testing::demoModelDir(), ModelOptions{}).config(), officialConfig("124M")}) {
        // Row pairs and RGBA16F both store 2 bytes per fp16 value.
        const double fp16 = double(ModelWeights(config, TexelFormat::HalfPairs, limits).bytes());
        const double int8 = double(ModelWeights(config, TexelFormat::Int8Quads, limits).bytes());
        EXPECT_LE(int8, 0.55 * fp16) << config.embedDim << " wide";
        std::cout << "[ measured ] n_embd " << config.embedDim << ", " << config.layers << " layers: weights int8 "
                  << int8 << " bytes, fp16 " << fp16 << " (" << int8 / fp16 << ")\n";
    }
}

// The fixture's random weights give small logit margins, so greedy runs part ways where they are
// near ties; each prompt's first token (the largest margins) must agree, the rest is reported.
TEST(Int8Weights, GreedyAgreementWithFp32OnTheFixture) {
    testing::ensureGlContext();
    Engine fp32(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32});
    Engine int8(testing::tinyModelDir(), ModelOptions{TexelFormat::Int8Quads});
    int agreed = 0, total = 0;
    for (const auto& prompt : testing::tinyPrompts()) {
        const auto a = fp32.generateGreedy(prompt.ids, 20), b = int8.generateGreedy(prompt.ids, 20);
        EXPECT_EQ(a.front(), b.front()) << prompt.key;
        std::size_t same = 0;
        while (same < a.size() && a[same] == b[same]) ++same;
        agreed += int(same);
        total += int(a.size());
        std::cout << "[ measured ] fixture " << prompt.key << ": int8 greedy agrees with fp32 for " << same << " of "
                  << a.size() << " tokens\n";
    }
    std::cout << "[ measured ] fixture: " << agreed << " of " << total
              << " greedy tokens before the first difference\n";
}

}  // namespace
}  // namespace gpt2
