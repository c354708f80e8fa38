// The GL forward against Hugging Face transformers on the gpt2-tiny fixture (tests/fixtures/README.md):
// last-position logits, top-5 at every position, the 20-token greedy continuation and attention
// probabilities, with fp32 and fp16 weights, unfolded and with textures limited to 256 texels
// (the 50257-row embedding then spans 197 texture pages of one row per line, or 7 pages of whole rows
// as on GPUs), and with split-K matmuls as on GPUs. The same tests run on the gpt2-variant fixture
// (head size 5 padded to 8 lanes, n_embd 15, an untied lm_head, the erf GELU, layer_norm_epsilon
// 1e-3, 3 layers) over a subset of the variants; its greedy margins (>= 0.065) let fp16 weights be
// compared on every token.
#include <gtest/gtest.h>

#include <functional>

#include "engine/engine.h"
#include "reference/cpu_reference.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"

namespace gpt2 {
namespace {

using testing::maxAbsDiff;
using testing::tinyPrompts;

// fp32 weights: the engine's logits differ from Hugging Face's by at most 3.6e-6 on these fixtures
// (llvmpipe; SwiftShader, Firefox and WebKit alike), from the order of fp32 sums. 1e-4 leaves a
// margin of about 30 and still fails a GELU constant of 0.045 for 0.044715 (4.7e-4).
constexpr float kFp32LogitTolerance = 1e-4f;
constexpr float kAttentionTolerance = 1e-4f;
// fp16 weights: every weight matrix is rounded to 11 significant bits (relative error <= 2^-11 =
// 4.9e-4) while activations, LayerNorm parameters and biases stay fp32. These logits reach |12|, so
// a rounding error that does not cancel moves a logit by about 12 * 4.9e-4 = 6e-3; 0.01 adds room
// for its growth through 2 layers. FixtureFp16.ErrorComesFromWeightRoundingOnly checks the premise:
// the CPU reference with the same rounded weights stays within this tolerance of Hugging Face, and
// the GL forward matches that rounded reference to the fp32 tolerance. With fp16 prompt inputs
// (Tuning::halfPromptInputs, GPUs' default with fp16 weights) the prompt matmuls' input rows are
// rounded the same way, and so are the queries of the prompt's attention scores:
// FixtureFp16.RoundingProductInputsTooStaysWithinTheTolerance.
constexpr float kFp16LogitTolerance = 0.01f;
// gpt2-variant's logits reach |22|, and rounding its weight matrices to fp16 moves them by up to 9.5e-3
// (FixtureFp16.ErrorComesFromWeightRoundingOnly prints it): the same reasoning gives 0.02, twice the
// rounding's effect. Its greedy margins are all >= 0.065 > 2 * 0.02, so fp16 compares every token.
constexpr float kVariantFp16LogitTolerance = 0.02f;

constexpr const char* kTiny = "gpt2-tiny";
constexpr const char* kVariant = "gpt2-variant";

float fp16Tolerance(const std::string& fixture) {
    return fixture == kVariant ? kVariantFp16LogitTolerance : kFp16LogitTolerance;
}

// A variant of the engine's options, named in the test's output. Unset fields are the policy's for
// the renderer the tests run on, except those the tests pin: fp16 weights as row pairs, fp32 prompt
// inputs (GPUs would round them) and chunks of 32; an unset promptSplitTexels is splitTexels.
struct Variant {
    ModelOptions options;
    std::string fixture = kTiny;  // a folder of tests/fixtures/ with a reference.json
};

Variant variant(TexelFormat weights, int maxTextureSize, const std::function<void(ModelOptions&)>& tune = {}) {
    ModelOptions o;
    o.weights = weights;
    o.maxTextureSize = maxTextureSize;
    o.halfPairs = 1;
    o.halfPromptInputs = 0;
    o.prefillChunk = 32;
    if (tune) tune(o);
    return {o};
}

// The GPU policies the variants run (tuning.h): split-K, whole embedding rows per line and the Q/K/V
// projection in one pass; with it, the one-row matmuls summing their LayerNorm's row moments, the
// prompt matmuls tiled over 8 rows per fragment, or fp16 prompt inputs.
void gpuPolicy(ModelOptions& o) {
    o.splitTexels = 3;
    o.pagedRows = 0;
    o.passPerOutput = 0;
}
void gpuRowMoments(ModelOptions& o) {
    gpuPolicy(o);
    o.rowMomentsInVertex = 1;
}
void gpuTiledPrompt(ModelOptions& o) {
    gpuPolicy(o);
    o.rowsPerFragment = 8;
    o.promptSplitTexels = 5;
}
void gpuHalfPromptInputs(ModelOptions& o) {
    gpuPolicy(o);
    o.halfPromptInputs = 1;
}
void noHalfPairs(ModelOptions& o) { o.halfPairs = 0; }

Variant onVariantFixture(Variant v) {
    v.fixture = kVariant;
    return v;
}

std::ostream& operator<<(std::ostream& out, const Variant& variant) {
    const ModelOptions& v = variant.options;
    if (variant.fixture != kTiny) out << "variant_";
    out << (v.weights == TexelFormat::Float32 ? "fp32" : "fp16") << "_max" << v.maxTextureSize;
    if (v.splitTexels > 0) out << "_split" << v.splitTexels;
    if (v.pagedRows == 0) out << "_rows_per_line";
    if (v.weights == TexelFormat::Float16) out << (v.halfPairs == 0 ? "_rgba16f" : "_pairs");
    if (v.activationLineWidth >= 0) out << "_line" << v.activationLineWidth;
    if (v.rowsPerFragment > 0) out << "_tiles" << v.rowsPerFragment;
    if (v.promptSplitTexels >= 0) out << "_prompt_split" << v.promptSplitTexels;
    if (v.passPerOutput == 0) out << "_fused_qkv";
    if (v.rowMomentsInVertex == 1) out << "_moments_in_vertex";
    if (v.halfPromptInputs == 1) out << "_half_prompt_inputs";
    if (v.prefillChunk != 32) out << "_chunk" << v.prefillChunk;
    if (v.maxColorBits > 0) out << "_bits" << v.maxColorBits;
    return out;
}

class FixtureTest : public ::testing::TestWithParam<Variant> {
protected:
    static std::unique_ptr<Engine> load(const Variant& v) {
        testing::ensureGlContext();
        ModelOptions options = v.options;
        if (options.promptSplitTexels < 0) options.promptSplitTexels = options.splitTexels;
        return std::make_unique<Engine>(testing::fixturePath(v.fixture), options);
    }
    void SetUp() override { engine_ = load(GetParam()); }
    float tolerance() const {
        return GetParam().options.weights == TexelFormat::Float32 ? kFp32LogitTolerance
                                                                  : fp16Tolerance(GetParam().fixture);
    }
    static const std::vector<testing::ReferencePrompt>& prompts() {
        return testing::referencePrompts(GetParam().fixture);
    }
    std::unique_ptr<Engine> engine_;
};

TEST_P(FixtureTest, LastLogitsMatchHuggingFace) {
    for (const auto& prompt : prompts()) {
        engine_->prefill(prompt.ids);
        const float diff = maxAbsDiff(engine_->logits(), prompt.lastLogits);
        EXPECT_LE(diff, tolerance()) << prompt.key;
        RecordProperty("max_abs_logit_diff_" + prompt.key, std::to_string(diff));
        std::cout << "[ measured ] " << GetParam() << " " << prompt.key << " max |dlogit| = " << diff << "\n";
    }
}

TEST_P(FixtureTest, TopFiveAtEveryPositionMatchHuggingFace) {
    for (const auto& prompt : prompts()) {
        // Position t's logits: a decode step after the prefix, so this also runs the KV cache path.
        engine_->prefill({prompt.ids[0]});
        for (std::size_t t = 0; t < prompt.ids.size(); ++t) {
            if (t > 0) engine_->step(prompt.ids[t]);
            const auto logits = engine_->logits();
            for (int i = 0; i < 5; ++i)
                EXPECT_NEAR(logits[std::size_t(prompt.top5Ids[t][std::size_t(i)])],
                            prompt.top5Logits[t][std::size_t(i)], tolerance())
                    << prompt.key << " position " << t;
            if (GetParam().options.weights == TexelFormat::Float32) {
                EXPECT_EQ(testing::topK(logits, 5), prompt.top5Ids[t]) << prompt.key << " position " << t;
            }
        }
    }
}

TEST_P(FixtureTest, GreedyContinuationMatchesHuggingFace) {
    for (const auto& prompt : prompts()) {
        const auto generated = engine_->generateGreedy(prompt.ids, int(prompt.greedy.size()));
        // fp32: every step must agree. fp16: agree up to the first step whose reference margin
        // (top-1 minus top-2 logit) is below twice the tolerance, where rounding may flip the order.
        std::size_t mustAgree = prompt.greedy.size();
        if (GetParam().options.weights == TexelFormat::Float16)
            for (std::size_t i = 0; i < prompt.greedyMargins.size(); ++i)
                if (prompt.greedyMargins[i] < 2 * tolerance()) {
                    mustAgree = i;
                    break;
                }
        if (GetParam().fixture == kVariant) {
            EXPECT_EQ(mustAgree, prompt.greedy.size()) << prompt.key << ": gpt2-variant's margins allow every step";
        }
        std::cout << "[ measured ] " << GetParam() << " " << prompt.key << " greedy steps compared: " << mustAgree
                  << "\n";
        EXPECT_EQ(std::vector<int>(generated.begin(), generated.begin() + std::ptrdiff_t(mustAgree)),
                  std::vector<int>(prompt.greedy.begin(), prompt.greedy.begin() + std::ptrdiff_t(mustAgree)))
            << prompt.key;
    }
}

// fp32: against Hugging Face. fp16: against the CPU reference with the same fp16-rounded weights
// (and matmul inputs, where the variant rounds them), since the probabilities move with the weights
// (by up to 7e-4 here) but not with the arithmetic.
TEST_P(FixtureTest, AttentionProbabilitiesMatchHuggingFace) {
    const auto& prompt = prompts().front();
    ASSERT_FALSE(prompt.attention.empty()) << "p1 carries the attentions";
    engine_->prefill(prompt.ids);
    const std::size_t perLayer = prompt.attention.size() / std::size_t(engine_->config().layers);
    const bool half = GetParam().options.weights == TexelFormat::Float16,
               halfInputs = GetParam().options.halfPromptInputs == 1;
    // gpt2-variant's last layer attends sharply: with fp16 prompt inputs its probabilities differ from
    // the rounded CPU reference's by 1.9e-4 (llvmpipe), since the rounding model below does not say
    // every value such a pass rounds; the bound there is one fp16 ulp of a probability in [0.5, 1),
    // 4.9e-4.
    const float bound = halfInputs && GetParam().fixture == kVariant ? 4.9e-4f : kAttentionTolerance;
    // What this variant rounds: its weights; with fp16 prompt inputs the LayerNorm outputs, the
    // activated MLP rows where c_fc is split, and the queries where scores tile several per fragment.
    reference::HalfRounding rounding;
    rounding.weights = true;
    rounding.layerNormOutputs = halfInputs;
    rounding.activatedRows = halfInputs && GetParam().options.splitTexels > 0;
    rounding.queries = halfInputs && GetParam().options.rowsPerFragment != 1;
    const auto rounded =
        half ? reference::forward(HuggingFaceCheckpoint(testing::fixturePath(GetParam().fixture)), prompt.ids, rounding)
             : reference::ForwardResult{};
    for (int layer = 0; layer < engine_->config().layers; ++layer) {
        const std::vector<float> expected =
            half ? rounded.attention[std::size_t(layer)]
                 : std::vector<float>(prompt.attention.begin() + std::ptrdiff_t(layer * perLayer),
                                      prompt.attention.begin() + std::ptrdiff_t((layer + 1) * perLayer));
        const float diff = maxAbsDiff(engine_->attention(layer), expected);
        EXPECT_LE(diff, bound) << "layer " << layer;
        std::cout << "[ measured ] " << GetParam() << " layer " << layer << " max |dprob| = " << diff << "\n";
    }
    // Readback recomputes the prefix; the logits after it are unchanged.
    EXPECT_LE(maxAbsDiff(engine_->logits(), prompt.lastLogits), tolerance());
}

INSTANTIATE_TEST_SUITE_P(
    Variants, FixtureTest,
    ::testing::Values(variant(TexelFormat::Float32, 0), variant(TexelFormat::Float32, 256),
                      variant(TexelFormat::Float16, 0), variant(TexelFormat::Float16, 256),
                      variant(TexelFormat::Float16, 0, noHalfPairs), variant(TexelFormat::Float16, 256, noHalfPairs),
                      variant(TexelFormat::Float32, 0, [](ModelOptions& o) { o.splitTexels = 3; }),
                      variant(TexelFormat::Float16, 0, [](ModelOptions& o) { o.splitTexels = 3; }),
                      // Prompt matmuls untiled (one row per fragment).
                      variant(TexelFormat::Float32, 0, [](ModelOptions& o) { o.rowsPerFragment = 1; }),
                      variant(TexelFormat::Float16, 256, [](ModelOptions& o) { o.rowsPerFragment = 1; }),
                      // As on GPUs: split-K and whole embedding rows per line (7 pages),
                      // the Q/K/V projection in one pass.
                      variant(TexelFormat::Float32, 256, gpuPolicy),
                      // As on GPUs in browsers: the one-row matmuls sum their
                      // LayerNorm's row moments themselves.
                      variant(TexelFormat::Float32, 256, gpuRowMoments),
                      variant(TexelFormat::Float16, 0,
                              [](ModelOptions& o) {
                                  o.splitTexels = 3;
                                  o.passPerOutput = 0;
                                  o.rowMomentsInVertex = 1;
                              }),
                      // Split-K into activation rows folded over whole lines.
                      variant(TexelFormat::Float16, 256,
                              [](ModelOptions& o) {
                                  o.splitTexels = 3;
                                  o.pagedRows = 0;
                                  o.halfPairs = -1;
                                  o.activationLineWidth = 4;
                              }),
                      // As on GPUs: prompt matmuls tiled over 8 (Q/K/V: 2) rows per
                      // fragment, split-K, the MLP activation in a pass of its own, the
                      // untiled Q/K/V in one pass.
                      variant(TexelFormat::Float32, 0, gpuTiledPrompt),
                      variant(TexelFormat::Float16, 256,
                              [](ModelOptions& o) {
                                  o.splitTexels = 3;
                                  o.pagedRows = 0;
                                  o.activationLineWidth = 4;
                                  o.rowsPerFragment = 4;
                                  o.promptSplitTexels = 2;
                                  o.passPerOutput = 0;
                              }),
                      // Tiled without split-K (one loop, activation in c_fc's epilogue).
                      variant(TexelFormat::Float32, 256,
                              [](ModelOptions& o) {
                                  o.splitTexels = 0;
                                  o.rowsPerFragment = 2;
                              }),
                      // fp16 prompt inputs as on GPUs (split-K, fused Q/K/V), with
                      // row pairs and RGBA16F weights; and without split-K, where
                      // the lm_head reads the rounded rows too.
                      variant(TexelFormat::Float16, 256, gpuHalfPromptInputs),
                      variant(TexelFormat::Float16, 0,
                              [](ModelOptions& o) {
                                  o.splitTexels = 3;
                                  o.halfPairs = 0;
                                  o.passPerOutput = 0;
                                  o.halfPromptInputs = 1;
                              }),
                      variant(TexelFormat::Float16, 0,
                              [](ModelOptions& o) {
                                  o.splitTexels = 0;
                                  o.halfPromptInputs = 1;
                              }),
                      // Chunks of 7 start on odd rows, where the tiled matmuls
                      // still fetch their input rows two at a time.
                      variant(TexelFormat::Float16, 0,
                              [](ModelOptions& o) {
                                  o.splitTexels = 3;
                                  o.rowsPerFragment = 2;
                                  o.passPerOutput = 0;
                                  o.halfPromptInputs = 1;
                                  o.prefillChunk = 7;
                              }),
                      // As on GPUs whose framebuffers take 512 colour bits (ANGLE on
                      // Metal, A11 and later: 4 rows per fragment) or 256 (A7-A10: 2
                      // rows, the Q/K/V a pass per output, no one-row Q/K/V pass).
                      variant(TexelFormat::Float32, 0,
                              [](ModelOptions& o) {
                                  o.splitTexels = 3;
                                  o.pagedRows = 0;
                                  o.passPerOutput = 0;
                                  o.rowMomentsInVertex = 1;
                                  o.maxColorBits = 512;
                              }),
                      variant(TexelFormat::Float32, 256,
                              [](ModelOptions& o) {
                                  o.splitTexels = 3;
                                  o.pagedRows = 0;
                                  o.passPerOutput = 0;
                                  o.rowMomentsInVertex = 1;
                                  o.maxColorBits = 256;
                              }),
                      variant(TexelFormat::Float16, 0,
                              [](ModelOptions& o) {
                                  o.splitTexels = 3;
                                  o.passPerOutput = 0;
                                  o.rowMomentsInVertex = 1;
                                  o.halfPromptInputs = 1;
                                  o.maxColorBits = 256;
                              })),
    [](const auto& info) {
        std::ostringstream name;
        name << info.param;
        return name.str();
    });

// gpt2-variant (tests/fixtures/README.md): the plain forward, textures of 256 texels, and the GPU
// policies (split-K, whole rows per line, fused Q/K/V, tiled prompt matmuls, fp16 prompt inputs).
INSTANTIATE_TEST_SUITE_P(HuggingFaceVariant, FixtureTest,
                         ::testing::Values(onVariantFixture(variant(TexelFormat::Float32, 0)),
                                           onVariantFixture(variant(TexelFormat::Float32, 256)),
                                           onVariantFixture(variant(TexelFormat::Float16, 0)),
                                           onVariantFixture(variant(TexelFormat::Float16, 256, noHalfPairs)),
                                           onVariantFixture(variant(TexelFormat::Float32, 256, gpuRowMoments)),
                                           onVariantFixture(variant(TexelFormat::Float32, 0, gpuTiledPrompt)),
                                           onVariantFixture(variant(TexelFormat::Float16, 256, gpuHalfPromptInputs))),
                         [](const auto& info) {
                             std::ostringstream name;
                             name << info.param;
                             return name.str();
                         });

TEST(FixtureFp16, ErrorComesFromWeightRoundingOnly) {
    testing::ensureGlContext();
    for (const std::string fixture : {kTiny, kVariant}) {
        const HuggingFaceCheckpoint checkpoint(testing::fixturePath(fixture));
        ModelOptions options{TexelFormat::Float16, 0};
        options.halfPromptInputs = 0;  // the weights' rounding only
        Engine engine(testing::fixturePath(fixture), options);
        for (const auto& prompt : testing::referencePrompts(fixture)) {
            const auto rounded = reference::forward(checkpoint, prompt.ids, {true});
            const std::vector<float> roundedLast(rounded.logits.end() - std::ptrdiff_t(prompt.lastLogits.size()),
                                                 rounded.logits.end());
            const float roundingEffect = maxAbsDiff(roundedLast, prompt.lastLogits);
            EXPECT_LE(roundingEffect, fp16Tolerance(fixture))
                << fixture << " " << prompt.key << ": the tolerance must cover the effect of rounding";
            engine.prefill(prompt.ids);
            EXPECT_LE(maxAbsDiff(engine.logits(), roundedLast), kFp32LogitTolerance) << fixture << " " << prompt.key;
            std::cout << "[ measured ] " << fixture << " " << prompt.key << " fp16 weight rounding moves logits by "
                      << roundingEffect << "\n";
        }
    }
}

// The premise of the fp16 prompt inputs' variants: the CPU reference with the weights and every
// product input the engine may round (LayerNorm outputs, the activated MLP rows, the queries)
// rounded to fp16 stays within the fp16 tolerance of Hugging Face. The engine rounds a subset of
// these (which, depends on split-K and row tiling); the variants above check it against Hugging
// Face at that tolerance.
TEST(FixtureFp16, RoundingProductInputsTooStaysWithinTheTolerance) {
    const HuggingFaceCheckpoint checkpoint(testing::tinyModelDir());
    for (const auto& prompt : tinyPrompts()) {
        const auto rounded = reference::forward(checkpoint, prompt.ids, {true, true, true, true});
        const std::vector<float> roundedLast(rounded.logits.end() - std::ptrdiff_t(prompt.lastLogits.size()),
                                             rounded.logits.end());
        const float effect = maxAbsDiff(roundedLast, prompt.lastLogits);
        EXPECT_LE(effect, kFp16LogitTolerance) << prompt.key;
        std::cout << "[ measured ] " << prompt.key << " fp16 weights and product inputs move logits by " << effect
                  << "\n";
    }
}

// The K/V cache in fp16 (kvCache 'fp16') with fp32 weights: the CPU reference with keys and values
// rounded to fp16 stays within the fp16 tolerance of Hugging Face, and so does the engine, without
// split-K (the Q/K/V matmul writes the cache: half its bytes) and with it (the matmul blends into
// fp32 rows that a pass per layer stores in the cache, since a blend into fp16 would round each
// partial sum). How a GPU rounds to fp16 as it writes is its own (to nearest, or toward zero), so the
// engine is held to the tolerance, not to the reference's rounding.
TEST(FixtureKvCache, Fp16CacheRoundsKeysAndValuesOnly) {
    testing::ensureGlContext();
    const HuggingFaceCheckpoint checkpoint(testing::tinyModelDir());
    ModelOptions fp32{TexelFormat::Float32, 0};
    fp32.halfPromptInputs = 0;
    fp32.splitTexels = 0;
    ModelOptions half = fp32;
    half.kvCache = TexelFormat::Float16;
    ModelOptions split = half;
    split.splitTexels = 3;
    split.promptSplitTexels = 3;
    Engine engine(testing::tinyModelDir(), half), blended(testing::tinyModelDir(), split);
    const ModelConfig& c = engine.config();
    const std::int64_t saved = Engine::plannedGpuBytes(c, fp32) - engine.gpuBytes();
    const std::int64_t cacheHalfBytes = std::int64_t(c.layers) * 2 * c.contextLength * c.embedDim * 2;
    EXPECT_GE(saved, cacheHalfBytes) << "the K/V caches take 8 bytes a texel, not 16";
    EXPECT_LE(double(saved), 1.25 * double(cacheHalfBytes)) << "and nothing else changed";
    const std::int64_t rowsBytes = std::int64_t(2) * c.contextLength * c.embedDim * 4;
    ModelOptions fp32Split = fp32;
    fp32Split.splitTexels = split.splitTexels;
    fp32Split.promptSplitTexels = split.promptSplitTexels;
    EXPECT_EQ(Engine::plannedGpuBytes(c, fp32Split) - blended.gpuBytes(), saved - rowsBytes)
        << "with split-K, the fp32 k and v rows the layers share cost their bytes back";
    for (const auto& prompt : tinyPrompts()) {
        const auto rounded = reference::forward(checkpoint, prompt.ids, {.keysValues = true});
        const std::vector<float> roundedLast(rounded.logits.end() - std::ptrdiff_t(prompt.lastLogits.size()),
                                             rounded.logits.end());
        const float effect = maxAbsDiff(roundedLast, prompt.lastLogits);
        EXPECT_LE(effect, kFp16LogitTolerance) << prompt.key << ": the tolerance covers rounding K and V";
        engine.prefill(prompt.ids);
        EXPECT_LE(maxAbsDiff(engine.logits(), prompt.lastLogits), kFp16LogitTolerance) << prompt.key;
        blended.prefill(prompt.ids);
        EXPECT_LE(maxAbsDiff(blended.logits(), prompt.lastLogits), kFp16LogitTolerance) << prompt.key;
        std::cout << "[ measured ] " << prompt.key << " fp16 K/V move logits by " << effect << "; engine "
                  << maxAbsDiff(engine.logits(), prompt.lastLogits) << ", split-K "
                  << maxAbsDiff(blended.logits(), prompt.lastLogits) << "\n";
    }
}

// Passes kept within 512 or 256 colour bits per framebuffer (fewer rows per fragment, the Q/K/V a pass
// per output) compute the same sums: their logits equal an unrestricted run's, as on GPUs (split-K,
// fused Q/K/V, fp16 prompt inputs where the weights are fp16).
TEST(FixtureColourBits, CappedPassesGiveTheUnrestrictedRunsLogits) {
    testing::ensureGlContext();
    for (const TexelFormat weights : {TexelFormat::Float32, TexelFormat::Float16, TexelFormat::Int8Quads}) {
        std::vector<std::vector<float>> runs;
        for (const int bits : {0, 512, 256}) {
            ModelOptions options{weights, 0};
            options.splitTexels = 3;
            options.promptSplitTexels = 3;
            options.passPerOutput = 0;
            options.halfPromptInputs = weights == TexelFormat::Float32 ? 0 : 1;
            options.maxColorBits = bits;
            Engine engine(testing::tinyModelDir(), options);
            if (bits > 0) {
                EXPECT_EQ(engine.capabilities().colorBits, bits);
            }
            std::vector<float> all;
            for (const auto& prompt : tinyPrompts()) {
                engine.prefill(prompt.ids);
                const auto logits = engine.logits();
                all.insert(all.end(), logits.begin(), logits.end());
                engine.step(prompt.greedy.front());
                const auto next = engine.logits();
                all.insert(all.end(), next.begin(), next.end());
            }
            runs.push_back(all);
        }
        for (std::size_t r = 1; r < runs.size(); ++r) {
            const float diff = maxAbsDiff(runs[r], runs[0]);
            EXPECT_LE(diff, 1e-5f) << int(weights) << " capped run " << r;
            std::cout << "[ measured ] colour bits cap " << (r == 1 ? 512 : 256) << ", weights " << int(weights)
                      << ": max |dlogit| against the unrestricted run " << diff << "\n";
        }
    }
}

TEST(FixtureReference, CpuReferenceMatchesHuggingFace) {
    // The reference the op and synthetic-model tests rely on, checked against transformers itself.
    for (const std::string fixture : {kTiny, kVariant}) {
        const HuggingFaceCheckpoint checkpoint(testing::fixturePath(fixture));
        for (const auto& prompt : testing::referencePrompts(fixture)) {
            const auto result = reference::forward(checkpoint, prompt.ids);
            const std::vector<float> last(result.logits.end() - std::ptrdiff_t(prompt.lastLogits.size()),
                                          result.logits.end());
            EXPECT_LE(maxAbsDiff(last, prompt.lastLogits), 1e-4f) << fixture << " " << prompt.key;
        }
    }
}

}  // namespace
}  // namespace gpt2
