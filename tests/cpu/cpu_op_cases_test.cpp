// The CPU backend's ops, one case each, against the CPU reference (tests/reference), as
// tests/ops/op_cases_test.cpp checks the GPU's passes: the products over every storage type a file
// may hold (F32 in both layouts, F16, BF16 and each GGUF block type, over one row as a decode step
// and over several as a prompt, into a fresh output and added to one), LayerNorm, each activation,
// and causal attention over a cache with its probabilities. Tolerance 1e-4 on outputs of magnitude up
// to ~10: fp32 sums against double ones, on the values the stored weights decode to.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/cpu_ops.h"
#include "cpu/stored_matrix.h"
#include "format/ggml_type.h"
#include "reference/cpu_reference.h"
#include "support/random_checkpoint.h"
#include "util/half.h"

namespace gpt2 {
namespace {

constexpr int kRows = 7, kPos0 = 5, kHeads = 5;
constexpr float kEps = 1e-5f, kTolerance = 1e-4f;

float maxError(const std::vector<float>& got, const std::vector<float>& want) {
    float worst = got.size() == want.size() ? 0.0f : INFINITY;
    for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
    return worst;
}

// A [inputs, outputs] matrix (a Conv1D weight, Hugging Face's shape) stored as `type`: random bytes
// for block types (every fp16 scale of moderate size), the values themselves for float types;
// `held` gets the [inputs, outputs] values it decodes to.
StoredMatrix storedMatrix(GgmlType type, int inputs, int outputs, bool transposed, std::mt19937& rng,
                          std::vector<float>& held) {
    const GgmlTypeInfo& info = *ggmlTypeInfo(std::uint32_t(type));
    StoredTensor t{"h.0.mlp.c_fc.weight", "case", {inputs, outputs}, type, transposed || info.blockValues > 1};
    const int rows = t.transposed ? outputs : inputs, rowValues = t.transposed ? inputs : outputs;
    const std::size_t rowBytes = std::size_t(rowValues / info.blockValues * info.blockBytes);
    std::vector<std::uint8_t> bytes(std::size_t(rows) * rowBytes);
    if (info.blockValues > 1) {
        for (auto& b : bytes) b = std::uint8_t(rng());
        // Each fp16 scale (d; and the offset of Q4_1, Q5_1 and the K-quants) of exponent 3..8, so that
        // the weights stay finite and of moderate size.
        std::vector<int> halves{0};
        if (type == GgmlType::Q6_K) halves = {info.blockBytes - 2};
        if (info.offsets && type != GgmlType::Q4_0) halves = {0, 2};
        for (std::size_t at = 0; at < bytes.size(); at += std::size_t(info.blockBytes))
            for (const int h : halves) {
                std::uint8_t& high = bytes[at + std::size_t(h) + 1];
                high = std::uint8_t((high & 0x83) | (3 + rng() % 6) << 2);
            }
    } else {
        const auto values = testing::randomVector(std::size_t(rows) * rowValues, 0.3f, rng);
        for (std::size_t i = 0; i < values.size(); ++i) {
            std::uint32_t bits;
            std::memcpy(&bits, &values[i], 4);
            const std::uint16_t half = type == GgmlType::F16 ? floatToHalf(values[i]) : std::uint16_t(bits >> 16);
            if (type == GgmlType::F32)
                std::memcpy(bytes.data() + 4 * i, &bits, 4);
            else
                std::memcpy(bytes.data() + 2 * i, &half, 2);
        }
    }
    std::vector<float> decoded(std::size_t(rows) * rowValues);
    for (int r = 0; r < rows; ++r)
        decodeValues(type, bytes.data() + std::size_t(r) * rowBytes, rowValues,
                     decoded.data() + std::size_t(r) * rowValues);
    held.assign(std::size_t(inputs) * outputs, 0.0f);
    for (int k = 0; k < inputs; ++k)
        for (int n = 0; n < outputs; ++n)
            held[std::size_t(k) * outputs + n] =
                t.transposed ? decoded[std::size_t(n) * inputs + k] : decoded[std::size_t(k) * outputs + n];
    t.end = bytes.size();
    return StoredMatrix(t, std::move(bytes), false);
}

// x [rows, K] @ W [K, N] with the product's worst error relative to the sum of its terms' magnitudes
// (fp32 sums of K terms against double ones: within 1e-6 of it).
void expectProduct(GgmlType type, bool transposed, int rows, bool accumulate) {
    std::mt19937 rng{std::uint32_t(type) * 16 + std::uint32_t(rows) * 2 + std::uint32_t(transposed)};
    // K-quants' rows are whole super-blocks of 256; N is no multiple of the products' 4 outputs a tile.
    const int K = 256, N = 99;
    std::vector<float> held;
    const StoredMatrix w = storedMatrix(type, K, N, transposed, rng, held);
    const auto x = testing::randomVector(std::size_t(rows) * K, 1.0f, rng);
    const auto start = testing::randomVector(std::size_t(rows) * N, 1.0f, rng);
    std::vector<float> y = start;
    w.product(x.data(), y.data(), rows, accumulate);
    const auto want = reference::matmul(x, held, {}, rows, K, N);
    int differ = 0;
    for (int r = 0; r < rows; ++r)
        for (int n = 0; n < N; ++n) {
            double magnitude = 0.0;
            for (int k = 0; k < K; ++k)
                magnitude += std::abs(double(x[std::size_t(r) * K + k]) * held[std::size_t(k) * N + n]);
            const std::size_t at = std::size_t(r) * N + n;
            const double expected = double(want[at]) + (accumulate ? start[at] : 0.0);
            if (std::abs(y[at] - expected) > 1e-6 * magnitude + 1e-6 && ++differ <= 3)
                ADD_FAILURE() << ggmlTypeName(std::uint32_t(type)) << " rows " << rows << ": y[" << r << "][" << n
                              << "] = " << y[at] << ", expected " << expected;
        }
    EXPECT_EQ(differ, 0);
}

struct ProductCase {
    GgmlType type;
    bool transposed;  // F32 and the float types: rows of outputs (GGUF's Conv1D) or of inputs (a checkpoint's)
};

class CpuProduct : public ::testing::TestWithParam<ProductCase> {};

TEST_P(CpuProduct, OneRowAndSevenRowsFreshAndAddedMatchTheReference) {
    for (const int rows : {1, kRows})
        for (const bool accumulate : {false, true})
            expectProduct(GetParam().type, GetParam().transposed, rows, accumulate);
}

INSTANTIATE_TEST_SUITE_P(EveryStorageType, CpuProduct,
                         ::testing::Values(ProductCase{GgmlType::F32, false}, ProductCase{GgmlType::F32, true},
                                           ProductCase{GgmlType::F16, false}, ProductCase{GgmlType::F16, true},
                                           ProductCase{GgmlType::BF16, false}, ProductCase{GgmlType::Q8_0, true},
                                           ProductCase{GgmlType::Q4_0, true}, ProductCase{GgmlType::Q4_1, true},
                                           ProductCase{GgmlType::Q5_0, true}, ProductCase{GgmlType::Q5_1, true},
                                           ProductCase{GgmlType::Q4_K, true}, ProductCase{GgmlType::Q5_K, true},
                                           ProductCase{GgmlType::Q6_K, true}),
                         [](const auto& info) {
                             return ggmlTypeName(std::uint32_t(info.param.type)) +
                                    (info.param.transposed ? "_rows_of_outputs" : "_rows_of_inputs");
                         });

TEST(CpuOps, LayerNormMatchesTheReference) {
    std::mt19937 rng{1};
    const int C = 120;
    const auto x = testing::randomVector(std::size_t(kRows) * C, 2.0f, rng, 0.5f);
    const auto gamma = testing::randomVector(C, 0.1f, rng, 1.0f), beta = testing::randomVector(C, 0.1f, rng);
    std::vector<float> got(x.size());
    for (int r = 0; r < kRows; ++r)
        cpu::layerNorm(x.data() + r * C, gamma.data(), beta.data(), kEps, C, got.data() + r * C);
    EXPECT_LE(maxError(got, reference::layerNorm(x, kRows, C, gamma, beta, kEps)), kTolerance);
}

TEST(CpuOps, EachActivationMatchesTheReference) {
    for (const Activation kind : {Activation::GeluTanh, Activation::GeluErf, Activation::Relu})
        for (float x = -8.0f; x <= 8.0f; x += 0.0625f)
            EXPECT_NEAR(cpu::activate(x, kind), reference::activation(x, kind), 1e-6f) << "x " << x;
}

// Queries at positions [kPos0, kPos0 + kRows), each over the cache up to it, as a prompt's chunk runs.
TEST(CpuOps, CausalAttentionOverTheCacheAndItsProbabilitiesMatchTheReference) {
    std::mt19937 rng{2};
    const int C = 120, T = kPos0 + kRows;
    const auto q = testing::randomVector(std::size_t(kRows) * C, 1.0f, rng);
    const auto k = testing::randomVector(std::size_t(T) * C, 1.0f, rng),
               v = testing::randomVector(std::size_t(T) * C, 1.0f, rng);
    const float scale = 1.0f / std::sqrt(float(C / kHeads));
    std::vector<float> wantProbs;
    const auto want = reference::attention(q, k, v, kRows, kPos0, C, kHeads, scale, &wantProbs);
    std::vector<float> got(std::size_t(kRows) * C, 0.0f), scores;
    float probError = 0.0f;
    for (int i = 0; i < kRows; ++i) {
        const int keys = kPos0 + i + 1;
        std::vector<float> probs(std::size_t(kHeads) * keys);
        for (int head = 0; head < kHeads; ++head)
            cpu::attendHead(q.data() + i * C, k.data(), v.data(), keys, C, kHeads, head, scale, got.data() + i * C,
                            probs.data(), scores);
        // The reference's [heads][rows][T]: the masked keys after `keys` are 0.
        for (int h = 0; h < kHeads; ++h)
            for (int t = 0; t < keys; ++t)
                probError = std::max(probError, std::abs(probs[std::size_t(h) * keys + t] -
                                                         wantProbs[(std::size_t(h) * kRows + i) * T + t]));
    }
    EXPECT_LE(maxError(got, want), kTolerance);
    EXPECT_LE(probError, 1e-6f);
}

}  // namespace
}  // namespace gpt2
