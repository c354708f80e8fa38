#include <gtest/gtest.h>

#include "format/model_config.h"
#include "util/error.h"

namespace gpt2 {
namespace {

TEST(ModelConfig, ReadsHuggingFaceFieldsWithDefaults) {
    const auto c = parseModelConfig(R"({"model_type":"gpt2","vocab_size":100,"n_positions":32,"n_embd":120,)"
                                    R"("n_layer":3,"n_head":5,"n_inner":null,"activation_function":"gelu_new"})",
                                    "config.json");
    EXPECT_EQ(c.vocabSize, 100);
    EXPECT_EQ(c.contextLength, 32);
    EXPECT_EQ(c.headDim(), 24);
    EXPECT_EQ(c.innerDim, 480);
    EXPECT_FLOAT_EQ(c.layerNormEpsilon, 1e-5f);
    EXPECT_TRUE(c.tieWordEmbeddings);
}

TEST(ModelConfig, RoundTripsThroughJson) {
    ModelConfig c;
    c.embedDim = 30;
    c.heads = 5;
    c.innerDim = 50;
    c.activation = Activation::Relu;
    c.tieWordEmbeddings = false;
    const auto back = parseModelConfig(modelConfigToJson(c), "x");
    EXPECT_EQ(back.embedDim, 30);
    EXPECT_EQ(back.innerDim, 50);
    EXPECT_EQ(back.activation, Activation::Relu);
    EXPECT_FALSE(back.tieWordEmbeddings);
}

TEST(ModelConfig, KnowsTheBytesPerWeightItsDtypeNames) {
    EXPECT_EQ(parseModelConfig(R"({"dtype":"float16"})", "x").weightBytes, 2);
    EXPECT_EQ(parseModelConfig(R"({"torch_dtype":"bfloat16"})", "x").weightBytes, 2);
    EXPECT_EQ(parseModelConfig(R"({"torch_dtype":"float32"})", "x").weightBytes, 4);
    EXPECT_EQ(parseModelConfig(R"({"dtype":"float8_e4m3fn"})", "x").weightBytes, 0);
    EXPECT_EQ(parseModelConfig(R"({})", "x").weightBytes, 0);
    ModelConfig c;
    c.weightBytes = 2;
    EXPECT_EQ(parseModelConfig(modelConfigToJson(c), "x").weightBytes, 2);
}

TEST(ModelConfig, RejectsHeadsThatDoNotDivideEmbedding) {
    EXPECT_THROW(
        {
            try {
                parseModelConfig(R"({"n_embd":100,"n_head":3})", "config.json");
            } catch (const Error& e) {
                EXPECT_STREQ(e.what(), "config.json: n_embd (100) must be a multiple of n_head (3)");
                throw;
            }
        },
        Error);
}

TEST(ModelConfig, RejectsUnsupportedValues) {
    EXPECT_THROW(parseModelConfig(R"({"activation_function":"swish"})", "c"), Error);
    EXPECT_THROW(parseModelConfig(R"({"n_layer":0})", "c"), Error);
    EXPECT_THROW(parseModelConfig(R"({"model_type":"llama"})", "c"), Error);
    EXPECT_THROW(parseModelConfig(R"([1,2])", "c"), Error);
    EXPECT_THROW(parseModelConfig(R"({"n_embd":"768"})", "c"), Error);
}

}  // namespace
}  // namespace gpt2
