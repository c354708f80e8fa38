// GL resources have one owner each: a model that cannot be built (GPU memory exhausted) throws a
// clear error and leaves no GL object behind; a disposed model leaves none either.
#include <algorithm>
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "model/gpt2_model.h"
#include "gl/gl_objects.h"
#include "gl/texture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "util/error.h"

namespace gpt2 {
namespace {

TEST(GlResources, OutOfMemoryDuringAllocationIsAClearErrorAndFreesEverything) {
    testing::ensureGlContext();
    const int before = liveGlObjects();
    // 48 layers of n_embd 16384 (about 600 GB of fp32 weights): no GPU or llvmpipe holds it.
    ModelConfig huge;
    huge.embedDim = 16384;
    huge.heads = 128;
    huge.innerDim = 65536;
    huge.layers = 48;
    try {
        Gpt2Model model(huge, ModelOptions{TexelFormat::Float32});
        ADD_FAILURE() << "allocated a model far beyond memory";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("GL_OUT_OF_MEMORY"), std::string::npos) << e.what();
    }
    EXPECT_EQ(liveGlObjects(), before);
    // The context still works.
    Engine engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32});
    engine.prefill({464});
    EXPECT_EQ(engine.logits().size(), 50257u);
}

// A model counts the bytes of every texture it declares before allocating any: a cap below them
// refuses it with both numbers and leaves nothing allocated; at or above them it loads, and its
// textures then take exactly what it counted.
TEST(GlResources, GpuBytesAreCountedBeforeAllocatingAndACapRefusesUpFront) {
    testing::ensureGlContext();
    const int objects = liveGlObjects();
    const std::int64_t bytes = liveTextureBytes();
    std::int64_t planned = 0;
    {
        Engine engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float16});
        planned = engine.gpuBytes();
        EXPECT_EQ(liveTextureBytes() - bytes, planned);
    }
    ModelOptions capped{TexelFormat::Float16};
    capped.maxGpuBytes = double(planned - 1);
    try {
        Engine engine(testing::tinyModelDir(), capped);
        ADD_FAILURE() << "a model above maxGpuBytes loaded";
    } catch (const Error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("this model's textures would take "), std::string::npos) << message;
        EXPECT_NE(message.find("more than maxGpuBytes"), std::string::npos) << message;
        EXPECT_NE(message.find("try int8 or int4 weights, a 4-bit GGUF file, or a smaller model"), std::string::npos)
            << message;
    }
    EXPECT_EQ(liveTextureBytes(), bytes) << "nothing was allocated";
    EXPECT_EQ(liveGlObjects(), objects);
    capped.maxGpuBytes = double(planned);
    Engine engine(testing::tinyModelDir(), capped);
    EXPECT_EQ(engine.gpuBytes(), planned);
}

// What a page shows before it loads anything: the bytes a model would take, planned without
// allocating a texture or compiling a program, equal what the loaded model takes, in each format.
TEST(GlResources, PlannedGpuBytesEqualALoadedModelsWithoutAllocatingAnything) {
    testing::ensureGlContext();
    const ModelConfig config = Engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32}).config();
    for (const TexelFormat weights : {TexelFormat::Float32, TexelFormat::Float16, TexelFormat::Int8Quads}) {
        for (const int maxTextureSize : {0, 256}) {
            const int objects = liveGlObjects();
            const std::int64_t bytes = liveTextureBytes();
            ModelOptions options{weights, maxTextureSize};
            const std::int64_t planned = Engine::plannedGpuBytes(config, options);
            EXPECT_EQ(liveTextureBytes(), bytes);
            EXPECT_EQ(liveGlObjects(), objects);
            Engine engine(testing::tinyModelDir(), options);
            EXPECT_EQ(planned, engine.gpuBytes()) << int(weights) << ", max texture " << maxTextureSize;
            EXPECT_EQ(liveTextureBytes() - bytes, planned);
        }
    }
}

TEST(GlResources, ModelsReleaseEveryObject) {
    testing::ensureGlContext();
    const int before = liveGlObjects();
    const std::int64_t bytesBefore = liveTextureBytes();
    for (int i = 0; i < 3; ++i) {
        Engine engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float16, i == 1 ? 256 : 0});
        engine.generateGreedy({464, 318}, 4);
        engine.attention(1);
        EXPECT_GT(liveGlObjects(), before + 50);
        EXPECT_EQ(engine.gpuBytes(), liveTextureBytes() - bytesBefore) << "the model counts every texture it holds";
    }
    EXPECT_EQ(liveGlObjects(), before);
    EXPECT_EQ(liveTextureBytes(), bytesBefore);
}

// The polled generation (what the web module runs) gives the greedy tokens of the waiting one, never
// holds more than a prefill chunk's fence and a readback's, and leaves none behind.
TEST(GlResources, PolledGenerationHoldsAtMostTwoFencesAndFreesThem) {
    testing::ensureGlContext();
    const std::vector<int> prompt = {464, 318, 257, 1332, 13};
    {
        Engine engine(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32, 0, /*prefillChunk*/ 2});
        const std::vector<int> expected = engine.generateGreedy(prompt, 6);
        GenerateOptions options;
        options.maxNewTokens = 6;
        options.stopAtEndOfText = false;
        options.slideWindow = false;
        Generation generation(engine, prompt, options);
        std::vector<int> ids;
        int polls = 0, most = 0;
        while (!generation.done()) {
            if (auto token = generation.poll()) ids.push_back(token->id);
            most = std::max(most, liveGlFences());
            ++polls;
        }
        EXPECT_EQ(ids, expected);
        EXPECT_GT(polls, int(ids.size())) << "a prompt of 3 chunks takes a poll each";
        EXPECT_GE(most, 1);
        EXPECT_LE(most, 2);
    }
    EXPECT_EQ(liveGlFences(), 0);
}

}  // namespace
}  // namespace gpt2
