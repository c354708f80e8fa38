// int8 weights (TexelFormat::Int8Quads, quantized on the GPU at load with a scale per output
// channel): the values the GPU finds, checked against a reference quantizer written here; their cost
// in quality, measured by perplexity on held-out text and greedy agreement, and in memory. The
// op-case table (op_cases_test.cpp) checks each int8 matmul against the reference on the values the
// GPU holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/engine.h"
#include "format/checkpoint.h"
#include "reference/cpu_reference.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "util/file.h"
#include "util/half.h"
#include "weights-tools/synthetic_checkpoint.h"

namespace gpt2 {
namespace {

// A checkpoint's tensors as weights 'int8' leaves them: every weight matrix but wpe quantized per
// output channel (a Conv1D weight's column, a row of wte or lm_head): scale = the channel's largest
// |value| times 1/127 (a float product) with its last 8 bits of mantissa cleared, value = q * scale,
// q = |value| / scale rounded half up (in double: exact enough, as value and scale are floats), at
// most 127, with value's sign; wpe rounded to fp16; LayerNorm parameters and biases as they are.
class Int8Reference : public TensorSource {
public:
    explicit Int8Reference(const TensorSource& source) : source_(source) {}
    const ModelConfig& config() const override { return source_.config(); }
    bool has(const std::string& name) const override { return source_.has(name); }
    std::vector<float> read(const std::string& name, const std::vector<std::int64_t>& shape) const override {
        std::vector<float> v = source_.read(name, shape);
        if (shape.size() != 2) return v;
        if (name == "wpe.weight") {
            for (float& x : v) x = roundToHalf(x);
            return v;
        }
        const bool rowsAreChannels = name == "wte.weight" || name == "lm_head.weight";
        const std::int64_t rows = shape[0], cols = shape[1];
        const std::int64_t K = rowsAreChannels ? cols : rows, N = rowsAreChannels ? rows : cols;
        auto at = [&](std::int64_t k, std::int64_t n) -> float& {
            return rowsAreChannels ? v[std::size_t(n * cols + k)] : v[std::size_t(k * cols + n)];
        };
        for (std::int64_t n = 0; n < N; ++n) {
            float largest = 0;
            for (std::int64_t k = 0; k < K; ++k) largest = std::max(largest, std::abs(at(k, n)));
            float scale = largest * (1.0f / 127.0f);
            std::uint32_t bits;
            std::memcpy(&bits, &scale, 4);
            bits &= 0xFFFFFF00u;
            std::memcpy(&scale, &bits, 4);
            for (std::int64_t k = 0; k < K; ++k) {
                const float x = at(k, n);
                const double q = scale > 0 ? std::min(127.0, std::floor(std::abs(double(x)) / scale + 0.5)) : 0;
                at(k, n) = float(std::copysign(q, double(x)) * scale);
            }
        }
        return v;
    }

private:
    const TensorSource& source_;
};

// fp32 activations against the reference over the same int8 weights, which the GPU finds exactly
// (quantize_block_params.frag): what is left is the engine's fp32 error (measured 3.6e-6 for fp32
// weights); 1e-4 leaves thirty times that. gpt2-variant's 15-wide rows exercise the padded quads.
TEST(Int8Weights, GpuQuantizationMatchesTheReferenceQuantizer) {
    testing::ensureGlContext();
    for (const char* fixture : {"gpt2-tiny", "gpt2-variant"}) {
        const HuggingFaceCheckpoint checkpoint(testing::fixturePath(fixture));
        const Int8Reference quantized(checkpoint);
        ModelOptions options{TexelFormat::Int8Quads};
        options.halfPromptInputs = 0;
        Engine engine(testing::fixturePath(fixture), options);
        float worst = 0;
        for (const auto& prompt : testing::referencePrompts(fixture)) {
            const auto want = reference::forward(quantized, prompt.ids).logits;
            const std::size_t V = std::size_t(checkpoint.config().vocabSize);
            const std::vector<float> last(want.end() - std::ptrdiff_t(V), want.end());
            engine.prefill(prompt.ids);
            worst = std::max(worst, testing::maxAbsDiff(engine.logits(), last));
            // The quantization is not a no-op: the fixture's own logits are away from these.
            EXPECT_GT(testing::maxAbsDiff(last, prompt.lastLogits), 1e-3f) << fixture << " " << prompt.key;
        }
        EXPECT_LE(worst, 1e-4f) << fixture;
        std::cout << "[ measured ] " << fixture << ", int8: max |dlogit| against the reference quantizer " << worst
                  << "\n";
    }
}

// The bundled model's weights are F16: staged as fp16 on the GPU, they give the same codes. Its
// fp32 logits are within 2e-5 of Hugging Face's; 5e-4 is its fp32 bound (demo_model_test.cpp).
TEST(Int8Weights, GpuQuantizationOfFp16WeightsMatchesTheReferenceQuantizer) {
    testing::ensureGlContext();
    const HuggingFaceCheckpoint checkpoint(testing::demoModelDir());
    const Int8Reference quantized(checkpoint);
    ModelOptions options{TexelFormat::Int8Quads};
    options.halfPromptInputs = 0;
    Engine engine(testing::demoModelDir(), options);
    const std::vector<int> ids = engine.tokenizer().encode("The jury said that the city had been");
    const auto want = reference::forward(quantized, ids).logits;
    const std::size_t V = std::size_t(checkpoint.config().vocabSize);
    engine.prefill(ids);
    const float diff = testing::maxAbsDiff(engine.logits(), {want.end() - std::ptrdiff_t(V), want.end()});
    EXPECT_LE(diff, 5e-4f);
    std::cout << "[ measured ] brown-demo, int8: max |dlogit| against the reference quantizer " << diff << "\n";
}

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
