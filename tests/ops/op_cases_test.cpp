// The table of op cases (ggml's test-backend-ops): every op of src/model/ops, in the variants the
// tuning picks from, on random inputs against the CPU reference (tests/reference), compared by the
// largest absolute error. Tolerance 1e-4 on outputs of magnitude up to ~10: fp32 shaders against
// double sums; fp16 weights are compared on the rounded values they hold. op_edge_cases_test.cpp has the edge
// cases (folded layouts, row offsets, refused variants); a new op needs a row here.
//
// The same table times the ops, after checking each (docs/architecture.md, "How to add an op"):
//   build/native/tests/op_cases --time [--dims test|124M] [--runs N] [--gtest_filter=*matmul*]
// prints one JSON line per case: {"op_case", "dims", "runs", "ms_per_run", "renderer"}.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "gl/capabilities.h"
#include "model/linear.h"
#include "model/ops.h"
#include "model/int8_quantization.h"
#include "reference/cpu_reference.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/random_checkpoint.h"
#include "util/half.h"

namespace gpt2 {
namespace {

// T rows computed at positions [pos0, pos0 + T); one-row cases run position pos0.
struct Dims {
    const char* name;
    int T, pos0, C, heads, vocab;
    int Kp() const { return (C + 3) / 4 * 4; }
};
constexpr Dims kTestDims{"test", 7, 5, 120, 5, 203};
constexpr Dims kGpt2Dims{"124M", 32, 32, 768, 12, 50257};

struct Flags {
    Dims dims = kTestDims;
    bool time = false;
    int runs = 20;
} g_flags;

// What a case hands back: how to run its op, how to read what the op wrote, and what that should be.
struct Prepared {
    std::function<void()> run;
    std::function<std::vector<float>()> read;
    std::vector<float> expected;
};

// Inputs of a case: textures it owns and random values.
class OpContext {
public:
    explicit OpContext(const Dims& d) : d(d), limits_(queryCapabilities().limits) {}
    const Dims d;
    ProgramCache programs;

    Texture& texture(int rows, int cols, const std::vector<float>& values = {},
                     TexelFormat format = TexelFormat::Float32, int interleave = 1) {
        const int stored = (rows + rowsPerTexel(format) - 1) / rowsPerTexel(format);
        textures_.push_back(std::make_unique<Texture>(
            TensorLayout::make(stored, cols, limits_, "op case", 0, interleave), format, "op case"));
        if (!values.empty()) textures_.back()->uploadRows(0, rows, values.data());
        return *textures_.back();
    }
    std::vector<float> random(std::size_t n, float stddev = 1.0f, float mean = 0.0f) {
        return testing::randomVector(n, stddev, rng_, mean);
    }
    // A [Kp, n] weight (rows past C zero) in `format`, with its scales when int8 (n a multiple of 4);
    // `held` gets the [C, n] values the GPU holds.
    WeightMatrix weight(int n, TexelFormat format, std::vector<float>& held) {
        std::vector<float> padded(std::size_t(d.Kp()) * n, 0.0f);
        const auto values = random(std::size_t(d.C) * n, 0.3f);
        std::copy(values.begin(), values.end(), padded.begin());
        if (format == TexelFormat::Int8Quads) return int8Weight(padded, d.Kp(), n, false, held);
        if (format != TexelFormat::Float32)
            for (float& v : padded) v = roundToHalf(v);
        held.assign(padded.begin(), padded.begin() + std::int64_t(d.C) * n);
        return {&texture(d.Kp(), n, padded, format)};
    }
    // `values` (rows x cols, both multiples of 4) quantized to int8; `held` gets q * scale.
    WeightMatrix int8Weight(const std::vector<float>& values, int rows, int cols, bool channelsAreRows,
                            std::vector<float>& held) {
        const Int8Matrix q = quantizeInt8(values, rows, cols, channelsAreRows);
        held.resize(values.size());
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c)
                held[std::size_t(r) * cols + c] =
                    float(q.values[std::size_t(r) * cols + c]) * q.scales[std::size_t(channelsAreRows ? r : c)];
        Texture& t = texture(rows, cols, {}, TexelFormat::Int8Quads);
        t.uploadCodes(q.values.data());
        return {&t, &texture(1, int(q.scales.size()), q.scales)};
    }
    // Rows [row, row + count) of `values` (`cols` wide).
    static std::vector<float> rows(const std::vector<float>& values, int cols, int row, int count) {
        return {values.begin() + std::int64_t(row) * cols, values.begin() + std::int64_t(row + count) * cols};
    }

private:
    TextureLimits limits_;
    std::mt19937 rng_{42};
    std::vector<std::unique_ptr<Texture>> textures_;
};

constexpr float kEps = 1e-5f;
constexpr int kSplit = 8;  // the GPU policy's split-K

Prepared embedding(OpContext& o) {
    const Dims& d = o.d;
    const int P = d.pos0 + d.T;
    const auto wte = o.random(std::size_t(d.vocab) * d.C), wpe = o.random(std::size_t(P) * d.C);
    std::vector<float> ids(static_cast<std::size_t>(P));
    for (int p = 0; p < P; ++p) ids[std::size_t(p)] = float((p * 37 + 11) % d.vocab);
    Texture &out = o.texture(P, d.C), &idTexture = o.texture(P, 1, ids);
    std::vector<float> expected;
    for (int p = d.pos0; p < P; ++p)
        for (int c = 0; c < d.C; ++c)
            expected.push_back(wte[std::size_t(ids[std::size_t(p)]) * d.C + c] + wpe[std::size_t(p) * d.C + c]);
    auto pass = std::make_shared<Pass>(
        embeddingPass(o.programs, out, idTexture, WeightMatrix{&o.texture(d.vocab, d.C, wte)}, o.texture(P, d.C, wpe)));
    return {[=, &d] { pass->run(d.pos0, P); }, [&] { return out.readRows(d.pos0, d.T); }, expected};
}

// `split` 0: one pass whose fragments compute their row's statistics; > 0: a moments pass first.
Prepared layerNorm(OpContext& o, int split) {
    const Dims& d = o.d;
    const auto x = o.random(std::size_t(d.T) * d.C, 2.0f, 0.5f);
    const auto gamma = o.random(std::size_t(d.C), 0.1f, 1.0f), beta = o.random(std::size_t(d.C), 0.1f);
    Texture& out = o.texture(d.T, d.C);
    auto op =
        std::make_shared<LayerNormOp>(o.programs, out, o.texture(d.T, d.C, x), o.texture(1, d.C, gamma),
                                      o.texture(1, d.C, beta), d.C, kEps, split ? &o.texture(d.T, 4) : nullptr, split);
    return {[=, &d] { op->run(0, d.T, 0); }, [&] { return out.readRows(0, d.T); },
            reference::layerNorm(x, d.T, d.C, gamma, beta, kEps)};
}

// The matmuls of a block over T rows: x @ W (+ b) (+ residual), each variant of the declaration.
Prepared matmul(OpContext& o, int n, TexelFormat format, Epilogue activation, bool residual, int split, int parts = 1) {
    const Dims& d = o.d;
    const auto x = o.random(std::size_t(d.T) * d.C), bias = o.random(std::size_t(n), 0.1f);
    const auto res = o.random(std::size_t(d.T) * n);
    std::vector<float> held;
    const WeightMatrix w = o.weight(n, format, held);
    MatmulSpec spec{&o.texture(d.T, d.C, x), w.values, &o.texture(1, n, bias)};
    spec.weightScale = w.scales;
    if (residual) spec.residual = &o.texture(d.T, n, res);
    spec.activation = activation;
    spec.splitTexels = split;
    std::vector<Texture*> outputs;
    for (int p = 0; p < parts; ++p) outputs.push_back(&o.texture(d.T, n / parts));
    auto expected = reference::matmul(x, held, bias, d.T, d.C, n);
    for (std::size_t i = 0; i < expected.size(); ++i) {
        if (activation == Epilogue::GeluTanh) expected[i] = reference::activation(expected[i], Activation::GeluTanh);
        if (residual) expected[i] += res[i];
    }
    // Parts side by side per row, as the reference computed them.
    auto read = [=, &d] {
        std::vector<float> got(std::size_t(d.T) * n);
        for (int p = 0; p < parts; ++p) {
            const auto part = outputs[std::size_t(p)]->readRows(0, d.T);
            for (int r = 0; r < d.T; ++r)
                std::copy_n(part.begin() + std::int64_t(r) * (n / parts), n / parts,
                            got.begin() + std::int64_t(r) * n + p * (n / parts));
        }
        return got;
    };
    auto pass = std::make_shared<Pass>(matmulPass(o.programs, outputs, spec));
    return {[=, &d] { pass->run(0, d.T); }, read, expected};
}

// Decode steps: one row, split, its input fetched in the vertex shader, with the LayerNorm folded
// in from the row moments (Q/K/V, c_fc, the tied lm_head transposed) or GELU applied on fetch.
Prepared oneRowMatmul(OpContext& o, int n, bool transposed, Epilogue inputActivation, TexelFormat format,
                      int split = kSplit) {
    const Dims& d = o.d;
    const int rows = d.pos0 + 1, row = d.pos0;
    auto x = o.random(std::size_t(rows) * d.C, 2.0f, 0.5f);
    x[std::size_t(row) * d.C] = 40.0f;  // an outlier first value
    const auto gamma = o.random(std::size_t(d.C), 0.1f, 1.0f), beta = o.random(std::size_t(d.C), 0.1f);
    // The tied lm_head reads wte ([n, Kp]; int8 with a scale per row).
    std::vector<float> held;
    WeightMatrix w;
    if (!transposed) {
        w = o.weight(n, format, held);
    } else if (format == TexelFormat::Int8Quads) {
        w = o.int8Weight(o.random(std::size_t(n) * d.Kp(), 0.3f), n, d.Kp(), true, held);
    } else {
        held = o.random(std::size_t(n) * d.Kp(), 0.3f);
        for (float& v : held) v = roundToHalf(v);
        w = {&o.texture(n, d.Kp(), held, format)};
    }
    if (transposed) {
        std::vector<float> columns(std::size_t(d.C) * n);  // [C, n] of the [n, Kp] matrix held
        for (int t = 0; t < n; ++t)
            for (int c = 0; c < d.C; ++c) columns[std::size_t(c) * n + t] = held[std::size_t(t) * d.Kp() + c];
        held = columns;
    }
    Texture &xTexture = o.texture(rows, d.C, x), &out = o.texture(transposed ? 1 : rows, n);
    auto norm = std::make_shared<LayerNormOp>(o.programs, o.texture(rows, d.C), xTexture, o.texture(1, d.C, gamma),
                                              o.texture(1, d.C, beta), d.C, kEps, &o.texture(rows, 4), kSplit);
    MatmulSpec spec{&xTexture, w.values};
    spec.weightScale = w.scales;
    spec.transposedWeight = transposed;
    spec.splitTexels = split;
    spec.varyingVectors = queryCapabilities().varyingVectors;
    spec.inputFromVertex = true;
    spec.inputActivation = inputActivation;
    auto input = OpContext::rows(x, d.C, row, 1);
    if (inputActivation == Epilogue::None) {
        spec.inputLayerNorm = norm->inputLayerNorm();
        input = reference::layerNorm(input, 1, d.C, gamma, beta, kEps);
    } else {
        for (float& v : input) v = reference::activation(v, Activation::GeluTanh);
    }
    const int outRow = transposed ? 0 : row;
    spec.inRowOffset = row - outRow;
    auto pass = std::make_shared<Pass>(matmulPass(o.programs, {&out}, spec));
    return {[=] {
                if (!spec.inputLayerNorm) return pass->run(outRow, outRow + 1);
                norm->runMoments(row, row + 1);
                pass->run(outRow, outRow + 1);
            },
            [&out, outRow, n] {
                auto got = out.readRows(outRow, 1);
                got.resize(std::size_t(n));
                return got;
            },
            reference::matmul(input, held, {}, 1, d.C, n)};
}

// [rows, C] -> [rows, heads * padded head_dim], the engine's Q/K/V layout, and back.
std::vector<float> padHeads(const std::vector<float>& x, int rows, const Dims& d, bool pad = true) {
    const int D = d.C / d.heads, Dp = (D + 3) / 4 * 4;
    std::vector<float> out(std::size_t(rows) * (pad ? d.heads * Dp : d.C), 0.0f);
    for (int r = 0; r < rows; ++r)
        for (int h = 0; h < d.heads; ++h)
            for (int i = 0; i < D; ++i) {
                const std::size_t plain = std::size_t(r) * d.C + h * D + i,
                                  padded = (std::size_t(r) * d.heads + h) * Dp + i;
                out[pad ? padded : plain] = x[pad ? plain : padded];
            }
    return out;
}

// softmax(q k^T * scale, causal) v for queries [pos0, pos0 + T) over a cache of pos0 + T keys; with
// `probabilities`, the probabilities themselves (pos0 0: attention readback); with `keyBlocks`, one
// decode query over pos0 + T keys in two or three blocks of keys, the last one partial (flash-decoding).
enum class AttentionCase { Apply, Probabilities, KeyBlocks };

Prepared attention(OpContext& o, AttentionCase kind) {
    const Dims& d = o.d;
    const bool probabilities = kind == AttentionCase::Probabilities, decode = kind == AttentionCase::KeyBlocks;
    const int T = decode ? 1 : d.T, pos0 = probabilities ? 0 : decode ? d.pos0 + d.T - 1 : d.pos0;
    const int keys = pos0 + T, D = d.C / d.heads, Dp = (D + 3) / 4 * 4;
    const AttentionShape shape{d.heads, Dp / 4};
    const float scale = 1.0f / std::sqrt(float(D));
    const auto q = o.random(std::size_t(T) * d.C), k = o.random(std::size_t(keys) * d.C),
               v = o.random(std::size_t(keys) * d.C);
    std::vector<float> qAbsolute(std::size_t(pos0) * d.heads * Dp, 0.0f);  // queries sit at their positions
    const auto qPadded = padHeads(q, T, d);
    qAbsolute.insert(qAbsolute.end(), qPadded.begin(), qPadded.end());
    AttentionScratch scratch;
    scratch.stepScores = &o.texture(d.heads, keys);
    scratch.runScores = &o.texture(T * d.heads, keys);
    scratch.runRowMax = &o.texture(T * d.heads, 1);
    Texture &out = o.texture(keys, d.heads * Dp), &probs = o.texture(T * d.heads, T);
    Texture& vCache = o.texture(keys, d.heads * Dp, padHeads(v, keys, d));
    KeyBlocks& blocks = scratch.keyBlocks;
    blocks.blockKeys = decode ? 4 * (keys / 12 + 1) : 0;
    if (decode) {
        const int rows = d.heads * ((keys + blocks.blockKeys - 1) / blocks.blockKeys);
        blocks.partial = &o.texture(rows, Dp);
        blocks.stats = &o.texture(rows, Dp);
    }
    auto op = std::make_shared<AttentionOp>(o.programs, out, o.texture(keys, d.heads * Dp, qAbsolute),
                                            o.texture(keys, d.heads * Dp, padHeads(k, keys, d)), vCache, shape, scale,
                                            scratch);
    auto probsOp = std::make_shared<AttentionProbsOp>(o.programs, probs, scratch, shape);
    std::vector<float> expectedProbs;
    const auto expected = reference::attention(q, k, v, T, pos0, d.C, d.heads, scale, &expectedProbs);
    if (!probabilities)
        return {[=] { op->run(pos0, T); }, [&out, &d, pos0, T] { return padHeads(out.readRows(pos0, T), T, d, false); },
                expected};
    // Probability rows are (query, head); the reference's are [head][query][key].
    std::vector<float> byQuery(expectedProbs.size());
    for (int h = 0; h < d.heads; ++h)
        for (int t = 0; t < d.T; ++t)
            std::copy_n(expectedProbs.begin() + (std::int64_t(h) * d.T + t) * d.T, d.T,
                        byQuery.begin() + (std::int64_t(t) * d.heads + h) * d.T);
    return {[=, &d] {
                op->runScores(0, d.T);
                probsOp->run(0, d.T);
            },
            [&probs, &d] { return probs.readRows(0, d.T * d.heads); }, byQuery};
}

// Rows of logits, distinct within a row so the top-k order is unambiguous; padding ids hold the
// largest values: they must never win.
std::vector<float> logitRows(const Dims& d, int rows) {
    const int vocabRows = (d.vocab + 3) / 4 * 4;
    std::vector<float> logits(std::size_t(rows) * std::size_t(vocabRows), 100.0f);
    for (int r = 0; r < rows; ++r)
        for (int i = 0; i < d.vocab; ++i)
            logits[std::size_t(r) * vocabRows + std::size_t(i)] =
                float((i * 7919 + r * 104729) % d.vocab) * 0.01f - 3.0f;
    return logits;
}

// The k best keys of each row, (key, id, log Σ exp of the keys, 0) per rank: candidates row `rank`,
// texel `first + row`; the texels around them (first before, 2 after) keep what they held. With a
// warp (penalty != 1), every third token is seen: key = penalised logit / T, and where `masked`
// every seventh token is not allowed (-1e20 / T).
// The first level writes `ranks` ranks per fragment. `clustered`: the k best are tokens 0 .. k - 1, in
// one block (whose later ranks then need a scan of their own).
Prepared topk(OpContext& o, int rows, int first, int k, float temperature, float penalty, int ranks = 8,
              bool clustered = false, bool masked = false) {
    const Dims& d = o.d;
    const int vocabRows = (d.vocab + 3) / 4 * 4, columns = first + rows + 2;
    std::vector<float> logits = logitRows(d, rows);
    if (clustered)
        for (int r = 0; r < rows; ++r)
            for (int i = 0; i < k; ++i)
                logits[std::size_t(r) * vocabRows + std::size_t(i)] = 10.0f - 0.01f * float(i * 7 % k);
    std::vector<float> seen(std::size_t(vocabRows), 0.0f);
    for (int i = 0; i < d.vocab; i += 3) seen[std::size_t(i)] = 1.0f;
    // 16 bits a float: bit b of float f for token 16f + b.
    const int allowedCols = (vocabRows + 15) / 16;
    std::vector<float> allowed(std::size_t(allowedCols), 0.0f);
    for (int i = 0; i < d.vocab; ++i)
        if (i % 7 != 3) allowed[std::size_t(i) / 16] += float(1 << (i % 16));
    std::vector<float> expected(std::size_t(kMaxTopk) * std::size_t(columns) * 4, 7.0f);
    Texture &logitTexture = o.texture(rows, vocabRows, logits),
            &candidates = o.texture(kMaxTopk, 4 * columns, expected),
            &blocks = o.texture(rows * kMaxTopk, topkBlockColumns(vocabRows / 4), {}, TexelFormat::Float32, ranks),
            &heads = o.texture(rows * kMaxTopk, topkBlockColumns(vocabRows / 4), {}, TexelFormat::Float32, ranks),
            &seenTexture = o.texture(1, vocabRows, seen), &allowedTexture = o.texture(1, allowedCols, allowed);
    auto op = std::make_shared<TopkOp>(o.programs, candidates, blocks, heads, logitTexture, seenTexture, allowedTexture,
                                       d.vocab, ranks);
    expected.resize(std::size_t(k) * std::size_t(columns) * 4);
    for (int r = 0; r < rows; ++r) {
        std::vector<float> keys(std::size_t(d.vocab));
        for (int i = 0; i < d.vocab; ++i) {
            const float l = logits[std::size_t(r) * vocabRows + std::size_t(i)];
            const float penalised =
                seen[std::size_t(i)] > 0 && penalty != 1.0f ? (l > 0 ? l / penalty : l * penalty) : l;
            keys[std::size_t(i)] = (masked && i % 7 == 3 ? -1.0e20f : penalised) / temperature;
        }
        const double logSumExp = testing::logSumExp(keys);
        const std::vector<int> best = testing::topK(keys, k);
        for (int rank = 0; rank < k; ++rank) {
            const std::size_t at = (std::size_t(rank) * columns + std::size_t(first + r)) * 4;
            expected[at] = keys[std::size_t(best[std::size_t(rank)])];
            expected[at + 1] = float(best[std::size_t(rank)]);
            expected[at + 2] = float(logSumExp);
            expected[at + 3] = 0.0f;
        }
    }
    TopkWarp warp;
    warp.temperature = temperature;
    warp.repetitionPenalty = penalty;
    warp.masked = masked;
    warp.logSumExp = true;
    return {[=] { op->run(k, rows, first, warp); }, [&candidates, k] { return candidates.readRows(0, k); }, expected};
}

// log Σ exp of each row's first `vocab` logits (the padding's huge values must not count), written
// from output row 2 on.
Prepared logSumExp(OpContext& o) {
    const Dims& d = o.d;
    const int rows = 3, first = 2, vocabRows = (d.vocab + 3) / 4 * 4;
    const std::vector<float> logits = logitRows(d, rows);
    Texture& out = o.texture(first + rows, 1);
    auto op = std::make_shared<LogSumExpOp>(o.programs, out, o.texture(rows, topkBlockColumns(vocabRows / 4)),
                                            o.texture(rows, vocabRows, logits), d.vocab);
    std::vector<float> expected;
    for (int r = 0; r < rows; ++r) {
        const auto row = logits.begin() + std::ptrdiff_t(r) * vocabRows;
        expected.push_back(float(testing::logSumExp({row, row + d.vocab})));
    }
    return {[=] { op->run(rows, first); }, [&out] { return out.readRows(first, rows); }, expected};
}

// seen = the tokens of ids[from, to), joined to those of `before` when from > 0.
Prepared seenTokens(OpContext& o, int from) {
    const Dims& d = o.d;
    const int vocabRows = (d.vocab + 3) / 4 * 4, to = from + 6;
    std::vector<float> ids(std::size_t(to), 0.0f), before(std::size_t(vocabRows), 0.0f);
    for (int p = 0; p < to; ++p) ids[std::size_t(p)] = float((p * 37 + 11) % d.vocab);
    before[5] = before[std::size_t(d.vocab - 1)] = 1.0f;
    std::vector<float> expected(std::size_t(vocabRows), 0.0f);
    if (from > 0) expected = before;
    for (int p = from; p < to; ++p) expected[std::size_t(ids[std::size_t(p)])] = 1.0f;
    Texture &idTexture = o.texture(to, 1, ids), &out = o.texture(1, vocabRows),
            &beforeTexture = o.texture(1, vocabRows, before);
    auto pass = std::make_shared<Pass>(o.programs, "seen_tokens.frag", "", std::vector<Texture*>{&out},
                                       PassInputs{{"u_ids", &idTexture}, {"u_before", &beforeTexture}});
    pass->set("u_from", from).set("u_to", to);
    return {[=] { pass->run(0, 1); }, [&out] { return out.readRows(0, 1); }, expected};
}

Prepared chosenToken(OpContext& o) {
    Texture &ids = o.texture(o.d.pos0 + 1, 1), &candidates = o.texture(2, 4, {-1.5f, 1234.0f, 0, 0, -2.0f, 7.0f, 0, 0});
    auto pass = std::make_shared<Pass>(chosenTokenPass(o.programs, ids, candidates));
    const int row = o.d.pos0;
    return {[=] { pass->run(row, row + 1); }, [&ids, row] { return ids.readRows(row, 1); }, {1234.0f}};
}

struct OpCase {
    const char* name;
    std::function<Prepared(OpContext&)> prepare;
};

const TexelFormat kFp32 = TexelFormat::Float32, kFp16 = TexelFormat::Float16, kPairs = TexelFormat::HalfPairs,
                  kInt8 = TexelFormat::Int8Quads;
const std::vector<OpCase> kOpCases = {
    {"embedding", embedding},
    {"layer_norm", [](OpContext& o) { return layerNorm(o, 0); }},
    {"layer_norm_moments", [](OpContext& o) { return layerNorm(o, kSplit); }},
    {"matmul_fc_gelu_fp32", [](OpContext& o) { return matmul(o, 4 * o.d.C, kFp32, Epilogue::GeluTanh, false, 0); }},
    {"matmul_fc_gelu_fp16", [](OpContext& o) { return matmul(o, 4 * o.d.C, kFp16, Epilogue::GeluTanh, false, 0); }},
    {"matmul_proj_residual_pairs", [](OpContext& o) { return matmul(o, o.d.Kp(), kPairs, Epilogue::None, true, 0); }},
    {"matmul_proj_residual_pairs_split",
     [](OpContext& o) { return matmul(o, o.d.Kp(), kPairs, Epilogue::None, true, kSplit); }},
    {"matmul_qkv_pairs_split",
     [](OpContext& o) { return matmul(o, 3 * o.d.Kp(), kPairs, Epilogue::None, false, kSplit, 3); }},
    {"matmul_row_layer_norm", [](OpContext& o) { return oneRowMatmul(o, 4 * o.d.C, false, Epilogue::None, kPairs); }},
    {"matmul_row_gelu_input",
     [](OpContext& o) { return oneRowMatmul(o, o.d.Kp(), false, Epilogue::GeluTanh, kPairs); }},
    {"matmul_row_lm_head",
     [](OpContext& o) { return oneRowMatmul(o, (o.d.vocab + 3) / 4 * 4, true, Epilogue::None, kPairs); }},
    {"matmul_fc_gelu_int8", [](OpContext& o) { return matmul(o, 4 * o.d.C, kInt8, Epilogue::GeluTanh, false, 0); }},
    {"matmul_qkv_int8_split",
     [](OpContext& o) { return matmul(o, 3 * o.d.Kp(), kInt8, Epilogue::None, false, kSplit, 3); }},
    {"matmul_row_layer_norm_int8",
     [](OpContext& o) { return oneRowMatmul(o, 4 * o.d.C, false, Epilogue::None, kInt8); }},
    // As the policy splits int8 and 4-bit weights: 16 input texels per instance, 17 varying vectors.
    {"matmul_row_layer_norm_int8_16",
     [](OpContext& o) {
         return oneRowMatmul(o, 4 * o.d.C, false, Epilogue::None, kInt8, Tuning::kGpuQuantizedRowSplitTexels);
     }},
    {"matmul_row_lm_head_int8",
     [](OpContext& o) { return oneRowMatmul(o, (o.d.vocab + 3) / 4 * 4, true, Epilogue::None, kInt8); }},
    {"attention", [](OpContext& o) { return attention(o, AttentionCase::Apply); }},
    {"attention_probs", [](OpContext& o) { return attention(o, AttentionCase::Probabilities); }},
    {"attention_key_blocks", [](OpContext& o) { return attention(o, AttentionCase::KeyBlocks); }},
    {"topk", [](OpContext& o) { return topk(o, 1, 0, 8, 1.0f, 1.0f); }},
    {"topk_one", [](OpContext& o) { return topk(o, 1, 0, 1, 1.0f, 1.0f); }},
    {"topk_rows", [](OpContext& o) { return topk(o, 3, 2, 8, 1.0f, 1.0f); }},
    {"topk_40", [](OpContext& o) { return topk(o, 1, 0, 40, 1.0f, 1.0f); }},
    {"topk_most", [](OpContext& o) { return topk(o, 2, 0, kMaxTopk, 1.0f, 1.0f); }},
    {"topk_penalised_tempered", [](OpContext& o) { return topk(o, 2, 1, 5, 0.7f, 1.3f); }},
    {"topk_2_ranks_per_fragment", [](OpContext& o) { return topk(o, 2, 0, 7, 1.0f, 1.0f, 2); }},
    {"topk_1_rank_per_fragment", [](OpContext& o) { return topk(o, 1, 0, 5, 1.0f, 1.0f, 1); }},
    {"topk_clustered", [](OpContext& o) { return topk(o, 2, 0, 24, 1.0f, 1.0f, 4, true); }},
    {"topk_masked", [](OpContext& o) { return topk(o, 2, 0, 24, 0.7f, 1.3f, 4, false, true); }},
    {"seen_tokens", [](OpContext& o) { return seenTokens(o, 0); }},
    {"seen_tokens_joined", [](OpContext& o) { return seenTokens(o, 4); }},
    {"log_sum_exp", logSumExp},
    {"chosen_token", chosenToken},
};

void printTiming(const std::string& name, const Prepared& p) {
    for (int i = 0; i < 3; ++i) p.run();  // first use of the program, caches
    glFinish();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < g_flags.runs; ++i) p.run();
    glFinish();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("{\"op_case\":\"%s\",\"dims\":\"%s\",\"runs\":%d,\"ms_per_run\":%.6f,\"renderer\":\"%s\"}\n",
                name.c_str(), g_flags.dims.name, g_flags.runs, ms / g_flags.runs, queryCapabilities().renderer.c_str());
}

void PrintTo(const OpCase& c, std::ostream* out) { *out << c.name; }

class OpCases : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpCases, MatchesTheCpuReference) {
    testing::ensureGlContext();
    OpContext context(g_flags.dims);
    const Prepared p = GetParam().prepare(context);
    p.run();
    const auto got = p.read();
    ASSERT_EQ(got.size(), p.expected.size());
    EXPECT_LT(testing::maxAbsDiff(got, p.expected), 1e-4f);
    if (g_flags.time) printTiming(GetParam().name, p);
}

INSTANTIATE_TEST_SUITE_P(Table, OpCases, ::testing::ValuesIn(kOpCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace gpt2

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--time") {
            gpt2::g_flags.time = true;
        } else if (arg == "--runs" && i + 1 < argc) {
            gpt2::g_flags.runs = std::max(1, std::atoi(argv[++i]));
        } else if (arg == "--dims" && i + 1 < argc) {
            const std::string dims = argv[++i];
            if (dims != "test" && dims != "124M") {
                std::fprintf(stderr, "--dims must be test or 124M, got %s\n", dims.c_str());
                return 2;
            }
            gpt2::g_flags.dims = dims == "124M" ? gpt2::kGpt2Dims : gpt2::kTestDims;
        } else {
            std::fprintf(stderr,
                         "unknown argument %s (op_cases takes --time, --runs N, --dims test|124M and gtest's flags)\n",
                         arg.c_str());
            return 2;
        }
    }
    return RUN_ALL_TESTS();
}
