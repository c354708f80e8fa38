// weights 'int4': every weight matrix but wpe quantized on the GPU at load into 4-bit affine blocks
// (src/model/ops/quantize.h), the layout of 4-bit GGUF tensors. Checked against the CPU reference
// forward over weights that this file quantizes with the same rule, written out here independently;
// then what quantization costs in quality and what it saves in memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/engine.h"
#include "util/error.h"
#include "gl/capabilities.h"
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

// A checkpoint's tensors as weights 'int4' leaves them: every weight matrix rounded to fp16 (the
// GPU stages them so) and cut into blocks of 32 along its input dimension (a Conv1D weight's rows, a
// row of wte), each block value = code * scale + least, scale = (largest - least) * (1/15 as a float)
// with its low 13 mantissa bits cleared, code = how many of the steps (k + 1/2) * scale (k = 0..14)
// value - least reaches; wpe rounded to fp16; LayerNorm parameters and biases as they are.
float oneFifteenth() { return 1.0f / 15.0f; }  // the nearest float, 0x3D888889

float truncated(float scale) {
    std::uint32_t bits;
    std::memcpy(&bits, &scale, 4);
    bits &= 0xFFFFE000u;
    std::memcpy(&scale, &bits, 4);
    return scale;
}

class Int4Reference : public TensorSource {
public:
    explicit Int4Reference(const TensorSource& source) : source_(source) {}
    const ModelConfig& config() const override { return source_.config(); }
    bool has(const std::string& name) const override { return source_.has(name); }
    std::vector<float> read(const std::string& name, const std::vector<std::int64_t>& shape) const override {
        std::vector<float> v = source_.read(name, shape);
        if (shape.size() != 2) return v;
        for (float& x : v) x = roundToHalf(x);
        if (name == "wpe.weight") return v;
        const bool rowsAreChannels = name == "wte.weight" || name == "lm_head.weight";
        const std::int64_t rows = shape[0], cols = shape[1];
        const std::int64_t K = rowsAreChannels ? cols : rows, N = rowsAreChannels ? rows : cols;
        auto at = [&](std::int64_t k, std::int64_t n) -> float& {
            return rowsAreChannels ? v[std::size_t(n * cols + k)] : v[std::size_t(k * cols + n)];
        };
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t k0 = 0; k0 < K; k0 += 32) {
                float lo = at(k0, n), hi = lo;
                for (std::int64_t k = k0; k < k0 + 32; ++k) lo = std::min(lo, at(k, n)), hi = std::max(hi, at(k, n));
                const float scale = truncated((hi - lo) * oneFifteenth());
                for (std::int64_t k = k0; k < k0 + 32; ++k) {
                    const float above = at(k, n) - lo;
                    int code = 0;
                    for (int step = 0; step < 15; ++step) code += above >= float(2 * step + 1) * (0.5f * scale);
                    at(k, n) = float(code) * scale + lo;
                }
            }
        return v;
    }

private:
    const TensorSource& source_;
};

// fp32 activations against the reference over the same 4-bit weights, which the GPU finds exactly
// (quantize_block_params.frag): what is left is the engine's fp32 error, 3e-6 on llvmpipe; 1e-4
// leaves thirty times that.
constexpr float kInt4LogitTolerance = 1e-4f;

TEST(Int4Weights, GpuQuantizationMatchesTheReferenceQuantizer) {
    testing::ensureGlContext();
    const HuggingFaceCheckpoint checkpoint(testing::tinyModelDir());
    const Int4Reference quantized(checkpoint);
    ModelOptions options{TexelFormat::Int4Quads};
    options.halfPromptInputs = 0;
    Engine engine(testing::tinyModelDir(), options);
    float worst = 0;
    for (const auto& prompt : testing::tinyPrompts()) {
        const auto want = reference::forward(quantized, prompt.ids).logits;
        const std::size_t V = std::size_t(checkpoint.config().vocabSize);
        const std::vector<float> last(want.end() - std::ptrdiff_t(V), want.end());
        engine.prefill(prompt.ids);
        worst = std::max(worst, testing::maxAbsDiff(engine.logits(), last));
        // The quantization is not a no-op: the fixture's own logits are far from these.
        EXPECT_GT(testing::maxAbsDiff(last, prompt.lastLogits), 0.1f) << prompt.key;
    }
    EXPECT_LE(worst, kInt4LogitTolerance);
    std::cout << "[ measured ] gpt2-tiny, int4: max |dlogit| against the reference quantizer " << worst << "\n";
}

TEST(Int4Weights, PerplexityOnHeldOutBrownText) {
    testing::ensureGlContext();
    const std::string text = readTextFile(testing::fixturePath("brown-heldout/ca19-opening.txt"));
    double perplexity[2] = {};
    const TexelFormat formats[2] = {TexelFormat::Float32, TexelFormat::Int4Quads};
    for (int i = 0; i < 2; ++i) {
        Engine engine(testing::demoModelDir(), ModelOptions{formats[i]});
        perplexity[i] = engine.perplexity(engine.tokenizer().encode(text)).perplexity;
    }
    // 4 bits on a 7.7M-parameter model: a few percent (llama.cpp's Q4_0 of it costs 1%).
    EXPECT_LE(perplexity[1], 1.10 * perplexity[0]);
    std::cout << "[ measured ] brown-demo, held-out ca19: perplexity fp32 " << perplexity[0] << ", int4 "
              << perplexity[1] << " (int4 / fp32 " << perplexity[1] / perplexity[0] << ")\n";
}

TEST(Int4Weights, TakeAtMost04OfTheGpuBytesOfFp16) {
    testing::ensureGlContext();
    const TextureLimits limits = queryCapabilities().limits;
    for (const ModelConfig& config : {officialConfig("124M"), officialConfig("1.5B")}) {
        const double fp16 =
            double(ModelWeights(config, TexelFormat::HalfPairs, limits, Texture::Allocation::Later).bytes());
        const double int4 =
            double(ModelWeights(config, TexelFormat::Int4Quads, limits, Texture::Allocation::Later).bytes());
        // 4-bit codes plus an fp32 scale and offset per 32 weights: 6 bits a weight, and wpe in fp16.
        EXPECT_LE(int4, 0.4 * fp16) << config.embedDim << " wide";
        std::cout << "[ measured ] n_embd " << config.embedDim << ", " << config.layers << " layers: weights int4 "
                  << int4 << " bytes, fp16 " << fp16 << " (" << int4 / fp16 << ")\n";
    }
}

// A 4-bit texture takes codes 0..15 only; any other is refused by value and row, whichever of a
// texel's four it is (the upload checks four codes at once).
TEST(Int4Weights, CodesAboveFifteenAreRefused) {
    testing::ensureGlContext();
    const TextureLimits limits = queryCapabilities().limits;
    for (int column = 0; column < 8; ++column) {
        Texture codes(TensorLayout::make(2, 8, limits, "codes"), TexelFormat::Int4Quads, "codes");
        std::vector<std::int8_t> values(8 * 8, 15);
        values[5 * 8 + column] = 16 + column;
        try {
            codes.uploadCodes(values.data());
            FAIL() << "code " << 16 + column << " was taken";
        } catch (const Error& e) {
            const std::string expected = "code " + std::to_string(16 + column) + " at row 5 does not fit 4 bits";
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace gpt2
