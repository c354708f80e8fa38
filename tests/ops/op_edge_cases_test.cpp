// Every GL op alone against the CPU reference (tests/reference), on random inputs and several
// shapes: one row (decode) and many (prefill), widths that are not multiples of 64, head dims that
// are not multiples of 16 (or even of 4), and tiny texture limits that force folded layouts.
// Tolerance: 1e-4 absolute on outputs of magnitude up to ~10 (fp32 shaders vs double reference).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>

#include "model/ops.h"
#include "reference/cpu_reference.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/random_checkpoint.h"
#include "util/error.h"
#include "util/half.h"

namespace gpt2 {
namespace {

constexpr float kTolerance = 1e-4f;

struct OpShape {
    int T;  // rows being computed
    int C;  // width
    int heads;
    int maxTextureSize;
    int lineWidth = 0;  // > 0: every texture caps its lines at this many texels, as activations do
};

std::ostream& operator<<(std::ostream& out, const OpShape& s) {
    out << "T" << s.T << "_C" << s.C << "_H" << s.heads << "_max" << s.maxTextureSize;
    if (s.lineWidth) out << "_line" << s.lineWidth;
    return out;
}

class OpsTest : public ::testing::TestWithParam<OpShape> {
protected:
    void SetUp() override {
        testing::ensureGlContext();
        limits_ = {GetParam().maxTextureSize, 256};
    }
    std::unique_ptr<Texture> texture(int rows, int cols, const std::vector<float>& values = {},
                                     TexelFormat format = TexelFormat::Float32, int interleave = 1) {
        const int stored = format == TexelFormat::HalfPairs ? (rows + 1) / 2 : rows;
        auto t = std::make_unique<Texture>(
            TensorLayout::make(stored, cols, limits_, "op test", GetParam().lineWidth, interleave), format, "op test");
        if (!values.empty()) t->uploadRows(0, rows, values.data());
        return t;
    }
    // Weights in `format`; for fp16 formats `values` become the rounded values the GPU will hold.
    std::unique_ptr<Texture> weights(int rows, int cols, std::vector<float>& values, TexelFormat format) {
        if (format != TexelFormat::Float32)
            for (float& v : values) v = roundToHalf(v);
        return texture(rows, cols, values, format);
    }
    std::vector<float> random(std::size_t n, float stddev = 1.0f, float mean = 0.0f) {
        return testing::randomVector(n, stddev, rng_, mean);
    }
    // [rows, heads * head_dim] -> [rows, heads * padded head_dim], the engine's Q/K/V layout.
    std::vector<float> padHeads(const std::vector<float>& x, int rows) const {
        const int C = GetParam().C, H = GetParam().heads, D = C / H, Dp = (D + 3) / 4 * 4;
        std::vector<float> out(std::size_t(rows) * H * Dp, 0.0f);
        for (int r = 0; r < rows; ++r)
            for (int h = 0; h < H; ++h)
                for (int d = 0; d < D; ++d) out[(std::size_t(r) * H + h) * Dp + d] = x[std::size_t(r) * C + h * D + d];
        return out;
    }
    std::vector<float> unpadHeads(const std::vector<float>& x, int rows) const {
        const int C = GetParam().C, H = GetParam().heads, D = C / H, Dp = (D + 3) / 4 * 4;
        std::vector<float> out(std::size_t(rows) * C);
        for (int r = 0; r < rows; ++r)
            for (int h = 0; h < H; ++h)
                for (int d = 0; d < D; ++d) out[std::size_t(r) * C + h * D + d] = x[(std::size_t(r) * H + h) * Dp + d];
        return out;
    }
    // Split-K variants to run into `out`: 0 (one loop) always, `split` where the output rows are
    // whole lines (blended instances need that; SplitMatmulLeavesTheActivationToItsConsumer checks
    // that other layouts are refused).
    static std::vector<int> splits(const Texture& out, int split) {
        if (out.layout().rowsAreWholeLines()) return {0, split};
        return {0};
    }
    // LayerNormOp variants: statistics per fragment (0), and row moments summed by instances of 3
    // input texels (a divisor of few widths, so most shapes get fewer per instance) where a moments
    // texture of T rows has rows of whole lines.
    std::vector<int> layerNormSplits(int T) { return splits(*texture(T, 4), 3); }
    // LayerNormOp, both ways, of the rows of xv from `first` on (random gamma and beta) against the
    // reference.
    void expectLayerNorm(const std::vector<float>& xv, int first, float tolerance) {
        const int T = GetParam().T, C = GetParam().C;
        const auto gamma = random(std::size_t(C), 0.1f, 1.0f), beta = random(std::size_t(C), 0.1f);
        auto x = texture(T + first, C, xv), g = texture(1, C, gamma), b = texture(1, C, beta);
        const auto expected = reference::layerNorm(std::vector<float>(xv.begin() + std::int64_t(first) * C, xv.end()),
                                                   T, C, gamma, beta, 1e-5f);
        for (int split : layerNormSplits(T)) {
            auto out = texture(T, C), moments = texture(T + first, 4);
            LayerNormOp(programs_, *out, *x, *g, *b, C, 1e-5f, moments.get(), split).run(0, T, first);
            EXPECT_LT(testing::maxAbsDiff(out->readRows(0, T), expected), tolerance) << "moments split " << split;
        }
    }
    static constexpr TexelFormat kWeightFormats[] = {TexelFormat::Float32, TexelFormat::Float16,
                                                     TexelFormat::HalfPairs};

    ProgramCache programs_;
    TextureLimits limits_;
    std::mt19937 rng_{42};
};

TEST_P(OpsTest, LayerNormMatchesReferenceWithARowOffset) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int first = 2;  // output row r normalises x row r + 2, as a chunk after position 2 does
    expectLayerNorm(random(std::size_t(T + first) * C, 2.0f, 0.5f), first, kTolerance);
}

// Rows whose mean is 600 times their spread, where E[x^2] - E[x]^2 in fp32 loses the variance
// (x^2 ~ 9e4 has an ulp of 0.008 against a variance of 0.25). Summing about 32 values of ~300 in
// fp32 errs by up to ~1e-4 in the mean, 2e-4 after dividing by the spread: hence 5e-4.
TEST_P(OpsTest, LayerNormOfRowsFarFromZero) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    expectLayerNorm(random(std::size_t(T) * C, 0.5f, 300.0f), 0, 5e-4f);
}

// The row moments are sums of (x - c), c being the mean of the row's first texels. Their worst case
// is an outlier among those, which leaves E[(x - c)^2] - E[x - c]^2 to cancel: here the row's first
// value is 40, the others N(1, 0.5). With that first value alone as c, 256 columns missed by 8.7e-4.
// GPT-2's residual stream has such outlier columns.
TEST_P(OpsTest, LayerNormOfRowsWhoseFirstValueIsAnOutlier) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    auto xv = random(std::size_t(T) * C, 0.5f, 1.0f);
    for (int r = 0; r < T; ++r) xv[std::size_t(r) * C] = 40.0f;
    expectLayerNorm(xv, 0, kTolerance);
}

TEST_P(OpsTest, MatmulAfterLayerNormWithBiasAndEachActivation) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int N = 4 * C + 2;  // not a multiple of 4: padded output columns
    const int Kp = (C + 3) / 4 * 4;
    const auto xv = random(std::size_t(T) * C, 1.5f, 0.3f);
    const auto gamma = random(std::size_t(C), 0.1f, 1.0f), beta = random(std::size_t(C), 0.1f);
    const auto wv = random(std::size_t(C) * N, 0.3f), bias = random(std::size_t(N), 0.1f);
    std::vector<float> wPadded(std::size_t(Kp) * N, 0.0f);
    std::copy(wv.begin(), wv.end(), wPadded.begin());

    auto x = texture(T, C, xv), normed = texture(T, C);
    auto g = texture(1, C, gamma), b = texture(1, C, beta), w = texture(Kp, N, wPadded), bt = texture(1, N, bias);
    LayerNormOp(programs_, *normed, *x, *g, *b, C, 1e-5f).run(0, T, 0);
    const auto product = reference::matmul(reference::layerNorm(xv, T, C, gamma, beta, 1e-5f), wv, bias, T, C, N);

    for (auto [epilogue, activation] :
         {std::pair{Epilogue::GeluTanh, Activation::GeluTanh}, std::pair{Epilogue::GeluErf, Activation::GeluErf},
          std::pair{Epilogue::Relu, Activation::Relu}}) {
        auto out = texture(T, N);
        MatmulSpec spec{normed.get(), w.get(), bt.get()};
        spec.activation = epilogue;
        matmulPass(programs_, {out.get()}, spec).run(0, T);
        auto expected = product;
        for (float& e : expected) e = reference::activation(e, activation);
        EXPECT_LT(testing::maxAbsDiff(out->readRows(0, T), expected), kTolerance) << "activation " << int(epilogue);
    }
}

TEST_P(OpsTest, MatmulWithResidualOnARowRange) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int rows = T + 3, first = 2;  // render rows [2, 2 + T) of a taller target, as the cache positions do
    const int Kp = (C + 3) / 4 * 4;
    const auto xv = random(std::size_t(rows) * C), residual = random(std::size_t(rows) * C);
    auto x = texture(rows, C, xv), res = texture(rows, C, residual);
    const std::vector<float> sentinel(std::size_t(rows) * C, 7.0f);
    const std::vector<float> xs(xv.begin() + first * C, xv.begin() + (first + T) * C);
    for (TexelFormat format : kWeightFormats) {
        const auto wv = random(std::size_t(C) * C, 0.3f);
        std::vector<float> wPadded(std::size_t(Kp) * C, 0.0f);
        std::copy(wv.begin(), wv.end(), wPadded.begin());
        auto w = weights(Kp, C, wPadded, format);
        // The reference takes the weights as the GPU holds them (rounded for fp16); padding rows are 0.
        const std::vector<float> held(wPadded.begin(), wPadded.begin() + std::int64_t(C) * C);
        auto expected = reference::matmul(xs, held, {}, T, C, C);
        for (int i = 0; i < T * C; ++i) expected[std::size_t(i)] += residual[std::size_t(first * C + i)];
        for (int split : splits(*texture(rows, C), 3)) {
            auto out = texture(rows, C, sentinel);
            MatmulSpec spec{x.get(), w.get()};
            spec.residual = res.get();
            spec.splitTexels = split;
            matmulPass(programs_, {out.get()}, spec).run(first, first + T);

            const auto got = out->readRows(0, rows);
            EXPECT_LT(testing::maxAbsDiff(std::vector<float>(got.begin() + first * C, got.begin() + (first + T) * C),
                                          expected),
                      kTolerance)
                << "split " << split << " weights " << int(format);
            // Split-K clears its rows before blending: the rows around them must survive that too.
            for (int i = 0; i < first * C; ++i)
                ASSERT_EQ(got[std::size_t(i)], 7.0f) << "rows outside the range must be untouched";
            for (int i = (first + T) * C; i < rows * C; ++i)
                ASSERT_EQ(got[std::size_t(i)], 7.0f) << "rows outside the range must be untouched";
        }
    }
}

// A split c_fc stores sums before the activation; the projection after it activates on fetch.
TEST_P(OpsTest, SplitMatmulLeavesTheActivationToItsConsumer) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int Kp = (C + 3) / 4 * 4, N = 4 * C;
    const auto xv = random(std::size_t(T) * C, 1.5f, 0.3f), residual = random(std::size_t(T) * C);
    const auto gamma = random(std::size_t(C), 0.1f, 1.0f), beta = random(std::size_t(C), 0.1f);
    const auto w1 = random(std::size_t(C) * N, 0.3f), b1 = random(std::size_t(N), 0.1f);
    const auto w2 = random(std::size_t(N) * C, 0.1f), b2 = random(std::size_t(C), 0.1f);
    std::vector<float> w1Padded(std::size_t(Kp) * N, 0.0f);
    std::copy(w1.begin(), w1.end(), w1Padded.begin());
    auto x = texture(T, C, xv), res = texture(T, C, residual), normed = texture(T, C);
    auto g = texture(1, C, gamma), b = texture(1, C, beta), wFc = texture(Kp, N, w1Padded), bFc = texture(1, N, b1);
    auto wProj = texture(N, C, w2), bProj = texture(1, C, b2);
    auto hidden = texture(T, N), out = texture(T, C);
    LayerNormOp(programs_, *normed, *x, *g, *b, C, 1e-5f).run(0, T, 0);

    auto expected = reference::matmul(reference::layerNorm(xv, T, C, gamma, beta, 1e-5f), w1, b1, T, C, N);
    for (float& e : expected) e = reference::activation(e, Activation::GeluTanh);
    expected = reference::matmul(expected, w2, b2, T, N, C);
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] += residual[i];

    MatmulSpec fc{normed.get(), wFc.get(), bFc.get()};
    fc.splitTexels = 3;
    MatmulSpec proj{hidden.get(), wProj.get()};
    proj.bias = bProj.get();
    proj.residual = res.get();
    proj.inputActivation = Epilogue::GeluTanh;
    if (!hidden->layout().rowsAreWholeLines()) {
        EXPECT_THROW(matmulPass(programs_, {hidden.get()}, fc), Error) << "split-K into rows that share lines";
        return;
    }
    matmulPass(programs_, {hidden.get()}, fc).run(0, T);
    for (int split : splits(*out, 5)) {
        proj.splitTexels = split;
        matmulPass(programs_, {out.get()}, proj).run(0, T);
        EXPECT_LT(testing::maxAbsDiff(out->readRows(0, T), expected), kTolerance) << "projection split " << split;
    }
    fc.activation = Epilogue::GeluTanh;
    EXPECT_THROW(matmulPass(programs_, {hidden.get()}, fc), Error) << "an activation of split sums";
}

TEST_P(OpsTest, TransposedMatmulReadsWeightRowsLikeTheTiedLmHead) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int V = 203, Vp = 204;  // vocabulary not a multiple of 4
    const auto xv = random(std::size_t(T) * C);
    auto x = texture(T, C, xv);
    auto out = texture(1, Vp);
    const std::vector<float> last(xv.end() - C, xv.end());
    for (TexelFormat format : kWeightFormats) {
        const auto wte = random(std::size_t(V) * C, 0.3f);
        std::vector<float> wtePadded(std::size_t(Vp) * C, 0.0f);
        std::copy(wte.begin(), wte.end(), wtePadded.begin());
        auto w = weights(Vp, C, wtePadded, format);
        std::vector<float> wT(std::size_t(C) * V);
        for (int v = 0; v < V; ++v)
            for (int c = 0; c < C; ++c) wT[std::size_t(c) * V + v] = wtePadded[std::size_t(v) * C + c];
        for (int split : splits(*out, 5)) {
            MatmulSpec spec{x.get(), w.get()};
            spec.transposedWeight = true;
            spec.inRowOffset = T - 1;  // the last row only, as lm_head runs
            spec.splitTexels = split;
            matmulPass(programs_, {out.get()}, spec).run(0, 1);
            auto got = out->readRows(0, 1);
            got.resize(std::size_t(V));
            EXPECT_LT(testing::maxAbsDiff(got, reference::matmul(last, wT, {}, 1, C, V)), kTolerance)
                << "split " << split << " weights " << int(format);
        }
    }
}

TEST_P(OpsTest, FusedQkvWritesThreeTargets) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    // Each part is padded to whole texels (Pw columns), as the model pads Q, K and V.
    const int Kp = (C + 3) / 4 * 4, Pw = Kp, hf = 3 * C;
    auto wv = random(std::size_t(C) * hf, 0.3f);
    const auto xv = random(std::size_t(T) * C), bias = random(std::size_t(hf), 0.1f);
    // Row pairs here; the other weight formats are covered by the tests above.
    for (float& value : wv) value = roundToHalf(value);
    std::vector<float> wPadded(std::size_t(Kp) * 3 * Pw, 0.0f), bPadded(std::size_t(3 * Pw), 0.0f);
    for (int p = 0; p < 3; ++p)
        for (int c = 0; c < C; ++c) {
            bPadded[std::size_t(p * Pw + c)] = bias[std::size_t(p * C + c)];
            for (int k = 0; k < C; ++k)
                wPadded[std::size_t(k) * 3 * Pw + p * Pw + c] = wv[std::size_t(k) * hf + p * C + c];
        }
    auto x = texture(T, C, xv), w = weights(Kp, 3 * Pw, wPadded, TexelFormat::HalfPairs),
         b = texture(1, 3 * Pw, bPadded);
    auto q = texture(T, Pw), k = texture(T, Pw), v = texture(T, Pw);
    const auto expected = reference::matmul(xv, wv, bias, T, C, hf);
    for (int split : splits(*q, 2)) {
        MatmulSpec spec{x.get(), w.get()};
        spec.bias = b.get();
        spec.splitTexels = split;
        matmulPass(programs_, {q.get(), k.get(), v.get()}, spec).run(0, T);
        Texture* outs[] = {q.get(), k.get(), v.get()};
        for (int p = 0; p < 3; ++p) {
            const auto got = outs[p]->readRows(0, T);
            for (int r = 0; r < T; ++r)
                for (int c = 0; c < Pw; ++c) {
                    const float want = c < C ? expected[std::size_t(r) * hf + p * C + c] : 0.0f;
                    ASSERT_NEAR(got[std::size_t(r) * Pw + c], want, kTolerance)
                        << "split " << split << " part " << p << " row " << r << " col " << c;
                }
        }
    }
}

// Decode steps on GPUs: one-row split matmuls whose vertex shader fetches each instance's input
// texels once for all its fragments, normalising or activating them there. Each variant the model
// declares, for row `row` of taller textures as a decode position: the projections (bias, residual,
// every weight format), the MLP projection (GELU of its input), Q/K/V and c_fc with the LayerNorm
// folded in from the row moments (a row whose first value is an outlier), and the tied lm_head
// (transposed, LayerNorm folded in, output row 0 from input row `row`).
TEST_P(OpsTest, OneRowMatmulsTakeTheirInputFromTheVertexShader) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int rows = T + 2, row = T, Kp = (C + 3) / 4 * 4, V = 203, Vp = 204;
    auto xv = random(std::size_t(rows) * C, 2.0f, 0.5f);
    xv[std::size_t(row) * C] = 40.0f;
    const auto residual = random(std::size_t(rows) * C), bias = random(std::size_t(C), 0.1f);
    const auto gamma = random(std::size_t(C), 0.1f, 1.0f), beta = random(std::size_t(C), 0.1f);
    const std::vector<float> xRow(xv.begin() + std::int64_t(row) * C, xv.begin() + std::int64_t(row + 1) * C);
    const auto normedRow = reference::layerNorm(xRow, 1, C, gamma, beta, 1e-5f);
    auto x = texture(rows, C, xv), res = texture(rows, C, residual), g = texture(1, C, gamma), b = texture(1, C, beta);
    auto bt = texture(1, C, bias), moments = texture(rows, 4), normed = texture(rows, C);
    // Weights [Kp, n] in `format` (padding rows 0) and the values the GPU holds.
    auto makeWeights = [&](int n, TexelFormat format, std::vector<float>& held) {
        std::vector<float> padded(std::size_t(Kp) * n, 0.0f);
        const auto wv = random(std::size_t(C) * n, 0.3f);
        std::copy(wv.begin(), wv.end(), padded.begin());
        auto w = weights(Kp, n, padded, format);
        held.assign(padded.begin(), padded.begin() + std::int64_t(C) * n);
        return w;
    };
    auto rowOf = [](Texture& t, int r) { return t.readRows(r, 1); };

    for (int split : splits(*texture(rows, C), 3)) {
        if (split == 0) continue;  // needs split-K (output rows of whole lines)
        for (TexelFormat format : kWeightFormats) {
            std::vector<float> held;
            auto w = makeWeights(C, format, held);
            auto out = texture(rows, C);
            MatmulSpec proj{x.get(), w.get(), bt.get()};
            proj.residual = res.get();
            proj.splitTexels = split;
            proj.inputFromVertex = true;
            matmulPass(programs_, {out.get()}, proj).run(row, row + 1);
            auto expected = reference::matmul(xRow, held, bias, 1, C, C);
            for (int c = 0; c < C; ++c) expected[std::size_t(c)] += residual[std::size_t(row * C + c)];
            EXPECT_LT(testing::maxAbsDiff(rowOf(*out, row), expected), kTolerance)
                << "split " << split << " weights " << int(format);
            EXPECT_THROW(matmulPass(programs_, {out.get()}, proj).run(row - 1, row + 1), Error) << "two rows at once";
            proj.splitTexels = 0;
            EXPECT_THROW(matmulPass(programs_, {out.get()}, proj), Error)
                << "input from the vertex shader without split-K";

            MatmulSpec mlpProj{x.get(), w.get()};
            mlpProj.inputActivation = Epilogue::GeluTanh;
            mlpProj.splitTexels = split;
            mlpProj.inputFromVertex = true;
            matmulPass(programs_, {out.get()}, mlpProj).run(row, row + 1);
            auto activated = xRow;
            for (float& v : activated) v = reference::activation(v, Activation::GeluTanh);
            EXPECT_LT(testing::maxAbsDiff(rowOf(*out, row), reference::matmul(activated, held, {}, 1, C, C)),
                      kTolerance)
                << "GELU of the input, split " << split << " weights " << int(format);
        }

        LayerNormOp layerNorm(programs_, *normed, *x, *g, *b, C, 1e-5f, moments.get(), split);
        layerNorm.runMoments(row, row + 1);
        // Q, K and V of Kp columns each (parts are whole texels wide).
        std::vector<float> held;
        auto wQkv = makeWeights(3 * Kp, TexelFormat::HalfPairs, held);
        const auto qkvBias = random(std::size_t(3 * Kp), 0.1f);
        auto qkvBt = texture(1, 3 * Kp, qkvBias);
        auto q = texture(rows, Kp), k = texture(rows, Kp), v = texture(rows, Kp);
        MatmulSpec qkv{&layerNorm.input(), wQkv.get(), qkvBt.get()};
        qkv.inputLayerNorm = layerNorm.inputLayerNorm();
        qkv.splitTexels = split;
        qkv.inputFromVertex = true;
        matmulPass(programs_, {q.get(), k.get(), v.get()}, qkv).run(row, row + 1);
        const auto expected = reference::matmul(normedRow, held, qkvBias, 1, C, 3 * Kp);
        Texture* parts[] = {q.get(), k.get(), v.get()};
        for (int p = 0; p < 3; ++p)
            EXPECT_LT(testing::maxAbsDiff(rowOf(*parts[p], row), std::vector<float>(expected.begin() + p * Kp,
                                                                                    expected.begin() + (p + 1) * Kp)),
                      kTolerance)
                << "LayerNorm folded into Q/K/V, part " << p << ", split " << split;
        // The same with the moments summed by the vertex shader over the whole row.
        qkv.inputLayerNorm->moments = nullptr;
        auto q2 = texture(rows, Kp), k2 = texture(rows, Kp), v2 = texture(rows, Kp);
        matmulPass(programs_, {q2.get(), k2.get(), v2.get()}, qkv).run(row, row + 1);
        Texture* summedParts[] = {q2.get(), k2.get(), v2.get()};
        for (int p = 0; p < 3; ++p)
            EXPECT_LT(
                testing::maxAbsDiff(rowOf(*summedParts[p], row),
                                    std::vector<float>(expected.begin() + p * Kp, expected.begin() + (p + 1) * Kp)),
                kTolerance)
                << "LayerNorm folded into Q/K/V, its moments summed in the vertex shader, part " << p << ", split "
                << split;
        MatmulSpec perFragment = qkv;
        perFragment.inputFromVertex = false;
        EXPECT_THROW(matmulPass(programs_, {q.get(), k.get(), v.get()}, perFragment), Error)
            << "an input LayerNorm without moments in the fragment shader";

        const auto wte = random(std::size_t(V) * C, 0.3f);
        std::vector<float> wtePadded(std::size_t(Vp) * C, 0.0f);
        std::copy(wte.begin(), wte.end(), wtePadded.begin());
        auto wt = weights(Vp, C, wtePadded, TexelFormat::HalfPairs);
        std::vector<float> wT(std::size_t(C) * V);
        for (int t = 0; t < V; ++t)
            for (int c = 0; c < C; ++c) wT[std::size_t(c) * V + t] = wtePadded[std::size_t(t) * C + c];
        auto logits = texture(1, Vp);
        MatmulSpec lmHead{x.get(), wt.get()};
        lmHead.transposedWeight = true;
        lmHead.inRowOffset = row;
        lmHead.inputLayerNorm = layerNorm.inputLayerNorm();
        lmHead.splitTexels = split;
        lmHead.inputFromVertex = true;
        if (!logits->layout().rowsAreWholeLines()) continue;
        matmulPass(programs_, {logits.get()}, lmHead).run(0, 1);
        auto got = logits->readRows(0, 1);
        got.resize(std::size_t(V));
        EXPECT_LT(testing::maxAbsDiff(got, reference::matmul(normedRow, wT, {}, 1, C, V)), kTolerance)
            << "lm_head with the final LayerNorm folded in, split " << split;
    }
}

// The same LayerNorm folded into a matmul of many rows, in the fragment shader (the model does not
// use it there, where it costs two fetches per input texel and output texel, but it is the same op).
TEST_P(OpsTest, MatmulNormalisesItsInputFromRowMoments) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int Kp = (C + 3) / 4 * 4;
    const auto xv = random(std::size_t(T) * C, 2.0f, 0.5f);
    const auto gamma = random(std::size_t(C), 0.1f, 1.0f), beta = random(std::size_t(C), 0.1f);
    const auto wv = random(std::size_t(C) * C, 0.3f);
    std::vector<float> wPadded(std::size_t(Kp) * C, 0.0f);
    std::copy(wv.begin(), wv.end(), wPadded.begin());
    auto x = texture(T, C, xv), g = texture(1, C, gamma), b = texture(1, C, beta), w = texture(Kp, C, wPadded);
    auto moments = texture(T, 4), normed = texture(T, C), out = texture(T, C);
    const auto expected = reference::matmul(reference::layerNorm(xv, T, C, gamma, beta, 1e-5f), wv, {}, T, C, C);
    for (int split : layerNormSplits(T)) {
        if (split == 0) continue;  // the moments pass needs split-K
        LayerNormOp layerNorm(programs_, *normed, *x, *g, *b, C, 1e-5f, moments.get(), split);
        layerNorm.runMoments(0, T);
        MatmulSpec spec{x.get(), w.get()};
        spec.inputLayerNorm = layerNorm.inputLayerNorm();
        matmulPass(programs_, {out.get()}, spec).run(0, T);
        EXPECT_LT(testing::maxAbsDiff(out->readRows(0, T), expected), kTolerance) << "moments split " << split;
        spec.inputActivation = Epilogue::Relu;
        EXPECT_THROW(matmulPass(programs_, {out.get()}, spec), Error) << "an input LayerNorm and an input activation";
    }
}

// Runs of T queries, as a prompt chunk's: `rows` queries per fragment (interleaved scores and
// output, the chunk's edges inside groups of rows), each row's largest score from its own pass or
// found by every fragment (a decode step's form).
TEST_P(OpsTest, AttentionPrefillAndDecodeMatchReference) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int D = C / heads, Dp = (D + 3) / 4 * 4, padded = heads * Dp;
    const AttentionShape shape{heads, Dp / 4};
    const float scale = 1.0f / std::sqrt(float(D));
    for (const auto& [rows, ownRowMax] : {std::pair{1, false}, {1, true}, {2, true}, {4, true}}) {
        for (int pos0 : {0, 5}) {  // 0: prefill of T queries; 5: T queries after 5 cached positions
            const std::string where = "rows " + std::to_string(rows) + (ownRowMax ? " with" : " without") +
                                      " a row-max pass, pos0 " + std::to_string(pos0);
            const int keys = pos0 + T, stride = attentionStride(T, rows), groupsEnd = (keys + rows - 1) / rows * rows;
            const auto qv = random(std::size_t(T) * C), kv = random(std::size_t(keys) * C),
                       vv = random(std::size_t(keys) * C);
            // Queries sit at their absolute positions, as in the model.
            std::vector<float> qAbs(std::size_t(keys) * padded, 0.0f);
            const auto qPadded = padHeads(qv, T);
            std::copy(qPadded.begin(), qPadded.end(), qAbs.begin() + std::int64_t(pos0) * padded);
            auto q = texture(keys, padded, qAbs), k = texture(keys, padded, padHeads(kv, keys)),
                 v = texture(keys, padded, padHeads(vv, keys));
            auto scores = texture(heads * stride, keys, {}, TexelFormat::Float32, rows),
                 rowMax = texture(heads * stride, 1);
            auto out = texture(groupsEnd, padded, {}, TexelFormat::Float32, rows);
            auto scorePass = attentionScoresPass(programs_, *scores, *q, *k, shape, scale, rows);
            setAttentionRun(scorePass, pos0, T, stride);
            scorePass.run(0, heads * stride);
            if (ownRowMax) {
                auto maxPass = attentionRowMaxPass(programs_, *rowMax, *scores, shape);
                setAttentionRun(maxPass, pos0, T, stride);
                maxPass.run(0, heads * stride);
            }
            auto apply =
                attentionApplyPass(programs_, *out, *scores, *v, shape, rows, ownRowMax ? rowMax.get() : nullptr);
            setAttentionRun(apply, pos0, T, stride);
            apply.run(pos0 / rows * rows, groupsEnd);

            std::vector<float> probs;
            const auto expected = reference::attention(qv, kv, vv, T, pos0, C, heads, scale, &probs);
            EXPECT_LT(testing::maxAbsDiff(unpadHeads(out->readRows(pos0, T), T), expected), kTolerance) << where;

            auto probTexture = texture(T * heads, keys);
            auto probsPass = attentionProbsPass(programs_, *probTexture, *scores, shape);
            setAttentionRun(probsPass, pos0, T, stride);
            probsPass.run(0, T * heads);
            const auto got = probTexture->readRows(0, T * heads);  // row = query * heads + head
            for (int h = 0; h < heads; ++h)
                for (int t = 0; t < T; ++t)
                    for (int s = 0; s < keys; ++s)
                        ASSERT_NEAR(got[(std::size_t(t) * heads + h) * keys + s],
                                    probs[(std::size_t(h) * T + t) * keys + s], 1e-6)
                            << where << ": head " << h << " query " << t << " key " << s;
        }
    }
}

// A run's scores from its queries as fp16 row pairs (Tuning::halfPromptInputs): runQueriesPass packs
// the run's rows from pos0 on, and each scores fragment fetches two queries a texel, whatever the
// run's start and length. The queries are normal halves, which any conversion to half keeps exactly
// (how a GPU rounds is LayerNormAndActivationPassesWriteFp16RowPairs' subject), so the result is
// their attention to the fp32 tolerance.
TEST_P(OpsTest, AttentionScoresReadQueriesAsFp16RowPairs) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int D = C / heads, Dp = (D + 3) / 4 * 4, padded = heads * Dp;
    const AttentionShape shape{heads, Dp / 4};
    const float scale = 1.0f / std::sqrt(float(D));
    for (int rows : {2, 8}) {
        for (int pos0 : {0, 5}) {
            const std::string where = "rows " + std::to_string(rows) + ", pos0 " + std::to_string(pos0);
            const int keys = pos0 + T, stride = attentionStride(T, rows), groupsEnd = (keys + rows - 1) / rows * rows;
            auto qv = random(std::size_t(T) * C);
            for (float& value : qv) value = roundToHalf(std::copysign(std::max(std::fabs(value), 0x1p-13f), value));
            const auto kv = random(std::size_t(keys) * C), vv = random(std::size_t(keys) * C);
            std::vector<float> qAbs(std::size_t(keys) * padded, 0.0f);
            const auto qPadded = padHeads(qv, T);
            std::copy(qPadded.begin(), qPadded.end(), qAbs.begin() + std::int64_t(pos0) * padded);
            auto q = texture(keys, padded, qAbs), k = texture(keys, padded, padHeads(kv, keys)),
                 v = texture(keys, padded, padHeads(vv, keys));
            auto pairs = texture(T, padded, {}, TexelFormat::HalfPairs);
            auto scores = texture(heads * stride, keys, {}, TexelFormat::Float32, rows),
                 rowMax = texture(heads * stride, 1);
            auto out = texture(groupsEnd, padded, {}, TexelFormat::Float32, rows);
            runQueriesPass(programs_, *pairs, *q).set("u_in_row_offset", pos0).run(0, T);
            auto scorePass = attentionScoresPass(programs_, *scores, *pairs, *k, shape, scale, rows);
            setAttentionRun(scorePass, pos0, T, stride);
            scorePass.run(0, heads * stride);
            auto maxPass = attentionRowMaxPass(programs_, *rowMax, *scores, shape);
            setAttentionRun(maxPass, pos0, T, stride);
            maxPass.run(0, heads * stride);
            auto apply = attentionApplyPass(programs_, *out, *scores, *v, shape, rows, rowMax.get());
            setAttentionRun(apply, pos0, T, stride);
            apply.run(pos0 / rows * rows, groupsEnd);

            const auto expected = reference::attention(qv, kv, vv, T, pos0, C, heads, scale);
            EXPECT_LT(testing::maxAbsDiff(unpadHeads(out->readRows(pos0, T), T), expected), kTolerance) << where;
        }
    }
    auto pairs = texture(T, padded, {}, TexelFormat::HalfPairs), scores = texture(heads * T, T);
    EXPECT_THROW(attentionScoresPass(programs_, *scores, *pairs, *pairs, shape, scale, 1), Error)
        << "one query per fragment cannot read row pairs";
}

// The first texels of each of a run of rows (readbacks of wide rows filled from the left), whether a
// row is one line or folded over several and whether the rows span pages.
TEST_P(OpsTest, ReadRowStartsReadsTheFirstTexelsOfEachRow) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int rows = T + 3, texelsPerRow = (C + 3) / 4;
    const auto values = random(std::size_t(rows) * C);
    auto t = texture(rows, C, values);
    for (const auto& [row0, count, texels] :
         {std::tuple{0, rows, texelsPerRow}, {1, T, 1}, {2, T, (texelsPerRow + 1) / 2}, {3, 0, 1}}) {
        const auto got = t->readRowStarts(row0, count, texels);
        ASSERT_EQ(got.size(), std::size_t(count) * texels * 4);
        for (int r = 0; r < count; ++r)
            for (int c = 0; c < texels * 4; ++c)
                ASSERT_EQ(got[(std::size_t(r) * texels) * 4 + c], c < C ? values[std::size_t(row0 + r) * C + c] : 0.0f)
                    << "rows from " << row0 << ", " << texels << " texels: row " << row0 + r << " column " << c;
    }
    EXPECT_THROW(t->readRowStarts(0, rows + 1, 1), Error);
    EXPECT_THROW(t->readRowStarts(0, 1, texelsPerRow + 1), Error);
}

TEST_P(OpsTest, EmbeddingAddsTokenAndPositionRows) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int V = 97, P = T + 4;
    const auto wte = random(std::size_t(V) * C), wpe = random(std::size_t(P) * C);
    std::vector<float> ids(std::size_t(P), 0.0f);
    for (int i = 0; i < P; ++i) ids[std::size_t(i)] = float((i * 37 + 11) % V);
    auto idTexture = texture(P, 1, ids), wteTexture = texture(V, C, wte), wpeTexture = texture(P, C, wpe),
         out = texture(P, C);
    embeddingPass(programs_, *out, *idTexture, WeightMatrix{wteTexture.get()}, *wpeTexture).run(3, 3 + T);
    const auto got = out->readRows(3, T);
    for (int t = 0; t < T; ++t)
        for (int c = 0; c < C; ++c) {
            const int p = 3 + t, id = int(ids[std::size_t(p)]);
            ASSERT_EQ(got[std::size_t(t) * C + c], wte[std::size_t(id) * C + c] + wpe[std::size_t(p) * C + c]);
        }
}

TEST_P(OpsTest, HalfFloatWeightsAreTheRoundedValues) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    // Odd row counts leave the last row pair half empty.
    const int rows = T + 2;
    const auto values = random(std::size_t(rows) * C, 3.0f);
    std::vector<float> ids;
    for (int i = 0; i < rows; ++i) ids.push_back(float((i * 5 + 3) % rows));
    auto idTexture = texture(rows, 1, ids);
    auto wpe = texture(rows, C, std::vector<float>(std::size_t(rows) * C, 0.0f));
    for (TexelFormat format : {TexelFormat::Float16, TexelFormat::HalfPairs}) {
        auto half = texture(rows, C, values, format);
        auto copy = texture(rows, C);
        // A permuting "embedding" copy: row i reads row ids[i] of the fp16 texture into an fp32 target.
        embeddingPass(programs_, *copy, *idTexture, WeightMatrix{half.get()}, *wpe).run(0, rows);
        const auto got = copy->readRows(0, rows);
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < C; ++c)
                ASSERT_EQ(got[std::size_t(r) * C + c], roundToHalf(values[std::size_t(ids[std::size_t(r)]) * C + c]))
                    << "format " << int(format) << " row " << r << " col " << c;
    }
}

// Tuning::halfPromptInputs: the LayerNorm and activation passes write fp16 row pairs
// (row_output.glsl) and the matmuls after them read those through `fetch` as any input. Read back
// through an fp32 copy, every value must be the fp32 result rounded to half: within the fp32
// tolerance plus half a step of fp16 (2^-11 relative).
TEST_P(OpsTest, LayerNormAndActivationPassesWriteFp16RowPairs) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int first = 2;  // output row r from x row r + 2
    const auto xv = random(std::size_t(T + first) * C, 2.0f, 0.5f);
    const std::vector<float> rows(xv.begin() + std::int64_t(first) * C, xv.end());
    const auto gamma = random(std::size_t(C), 0.1f, 1.0f), beta = random(std::size_t(C), 0.1f);
    auto x = texture(T + first, C, xv), g = texture(1, C, gamma), b = texture(1, C, beta);
    std::vector<float> ids;
    for (int i = 0; i < T; ++i) ids.push_back(float(i));
    auto idTexture = texture(T, 1, ids), zeros = texture(T, C, std::vector<float>(std::size_t(T) * C, 0.0f));
    // Row r of the pairs as fp32: an "embedding" with ids r and no position rows.
    const auto readPairs = [&](const Texture& pairs) {
        auto copy = texture(T, C);
        embeddingPass(programs_, *copy, *idTexture, WeightMatrix{&pairs}, *zeros).run(0, T);
        return copy->readRows(0, T);
    };
    const auto expectHalves = [&](const std::vector<float>& got, const std::vector<float>& want,
                                  const std::string& what) {
        ASSERT_EQ(got.size(), want.size());
        for (std::size_t i = 0; i < got.size(); ++i)
            ASSERT_LE(std::fabs(got[i] - want[i]), kTolerance + std::fabs(want[i]) * 0x1p-11f)
                << what << " value " << i;
    };
    const auto normed = reference::layerNorm(rows, T, C, gamma, beta, 1e-5f);
    for (int split : layerNormSplits(T)) {
        auto out = texture(T, C, {}, TexelFormat::HalfPairs), moments = texture(T + first, 4);
        LayerNormOp(programs_, *out, *x, *g, *b, C, 1e-5f, moments.get(), split).run(0, T, first);
        expectHalves(readPairs(*out), normed, "layer norm, moments split " + std::to_string(split));
    }
    auto gelu = rows, relu = rows;
    for (float& v : gelu) v = reference::activation(v, Activation::GeluTanh);
    for (float& v : relu) v = reference::activation(v, Activation::Relu);
    auto activated = texture(T, C, {}, TexelFormat::HalfPairs);
    activationPass(programs_, *activated, *x, int(Epilogue::GeluTanh)).set("u_in_row_offset", first).run(0, T);
    expectHalves(readPairs(*activated), gelu, "activation");
    // A run from an odd row writes its first pair whole, the row before it a copy of the run's first
    // row, and leaves the pairs before that alone.
    if (T < 4) return;
    activationPass(programs_, *activated, *x, int(Epilogue::Relu)).set("u_in_row_offset", first).run(3, T);
    auto expected = gelu;
    std::copy(relu.begin() + 3 * C, relu.end(), expected.begin() + 3 * C);
    std::copy(relu.begin() + 3 * C, relu.begin() + 4 * C, expected.begin() + 2 * C);
    expectHalves(readPairs(*activated), expected, "activation from row 3");
}

TEST_P(OpsTest, MatmulsReadFp16RowPairInputs) {
    const auto [T, C, heads, max, lineWidth] = GetParam();
    const int N = 2 * C;
    auto xv = random(std::size_t(T) * C, 1.5f);
    auto x = texture(T, C, xv, TexelFormat::HalfPairs);
    for (float& v : xv) v = roundToHalf(v);  // what the texture holds
    const auto wv = random(std::size_t(C) * N, 0.3f);
    std::vector<float> wPadded(std::size_t((C + 3) / 4 * 4) * N, 0.0f);
    std::copy(wv.begin(), wv.end(), wPadded.begin());
    auto w = texture((C + 3) / 4 * 4, N, wPadded);
    const auto expected = reference::matmul(xv, wv, {}, T, C, N);
    for (int split : splits(*texture(T, N), 3)) {
        auto out = texture(T, N);
        MatmulSpec spec{x.get(), w.get()};
        spec.splitTexels = split;
        matmulPass(programs_, {out.get()}, spec).run(0, T);
        EXPECT_LT(testing::maxAbsDiff(out->readRows(0, T), expected), kTolerance) << "split " << split;
    }
    // Register-tiled: each fragment computes 4 rows, two pairs.
    if (T < 4) return;
    const int tiled = T / 4 * 4;
    auto out = texture(T, N, {}, TexelFormat::Float32, 4);
    MatmulSpec spec{x.get(), w.get()};
    spec.rowsPerFragment = 4;
    matmulPass(programs_, {out.get()}, spec).run(0, tiled);
    EXPECT_LT(testing::maxAbsDiff(out->readRows(0, tiled),
                                  std::vector<float>(expected.begin(), expected.begin() + std::int64_t(tiled) * N)),
              kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Shapes, OpsTest,
                         ::testing::Values(OpShape{1, 120, 5, 16384},     // decode row, head dim 24
                                           OpShape{7, 120, 5, 16384},     // prefill rows
                                           OpShape{9, 30, 5, 16},         // head dim 6 (not whole texels), folded
                                           OpShape{13, 72, 4, 32},        // head dim 18, folded
                                           OpShape{1, 40, 2, 16},         // decode, folded
                                           OpShape{33, 256, 4, 64},       // head dim 64, many rows, folded
                                           OpShape{1, 120, 5, 16384, 8},  // decode row over 4 lines of 8 texels
                                           OpShape{6, 72, 4, 16384, 4}),  // rows split over lines of 4 texels
                         [](const auto& info) {
                             std::ostringstream name;
                             name << info.param;
                             return name.str();
                         });

}  // namespace
}  // namespace gpt2
