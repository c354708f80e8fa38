// GL resources have one owner each: a model that cannot be built (GPU memory exhausted) throws a
// clear error and leaves no GL object behind; a disposed model leaves none either.
#include <gtest/gtest.h>

#include "engine/engine.h"
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
        Gpt2Model model(huge, ModelOptions{});
        ADD_FAILURE() << "allocated a model far beyond memory";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("GL_OUT_OF_MEMORY"), std::string::npos) << e.what();
    }
    EXPECT_EQ(liveGlObjects(), before);
    // The context still works.
    Engine engine(testing::tinyModelDir(), ModelOptions{});
    engine.prefill({464});
    EXPECT_EQ(engine.logits().size(), 50257u);
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
        EXPECT_EQ(engine.model().gpuBytes(), liveTextureBytes() - bytesBefore) << "the model counts every texture it holds";
    }
    EXPECT_EQ(liveGlObjects(), before);
    EXPECT_EQ(liveTextureBytes(), bytesBefore);
}

}  // namespace
}  // namespace gpt2
