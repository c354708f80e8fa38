// The CPU backend's K/V cache (src/cpu/kv_cache.h): pages of positions read as one array would be,
// and fp16 rows read exactly as the floats they round to.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "cpu/cpu_model.h"
#include "cpu/cpu_ops.h"
#include "cpu/kv_cache.h"
#include "cpu/vector_math.h"
#include "util/half.h"

namespace gpt2 {
namespace {

TEST(CpuKvCache, HalvesToFloatsConvertsEveryHalfExactly) {
    for (std::uint32_t first = 0; first < 0x10000u; first += 4) {
        const std::uint16_t bits[4] = {std::uint16_t(first), std::uint16_t(first + 1), std::uint16_t(first + 2),
                                       std::uint16_t(first + 3)};
        const cpu::Floats4 got = cpu::halvesToFloats4(bits);
        for (int lane = 0; lane < 4; ++lane) {
            const float want = halfToFloat(bits[lane]);
            std::uint32_t a, b;
            const float g = got[lane];
            std::memcpy(&a, &g, 4);
            std::memcpy(&b, &want, 4);
            ASSERT_EQ(a, b) << "half 0x" << std::hex << bits[lane];
        }
    }
}

// Attention over T positions stored in the cache against attendHead over the same rows in one
// array (rounded to fp16 first for the fp16 cache): the same sums in the same order, so equal.
void expectAttentionAsOneArray(bool half) {
    ModelConfig config;
    config.layers = 2;
    config.embedDim = 24;
    config.heads = 3;
    config.contextLength = 200;
    cpu::KvCache cache(config, half);
    const int T = 2 * cpu::KvCache::kPagePositions + 13, C = config.embedDim;
    std::mt19937 random(7);
    std::normal_distribution<float> normal;
    const std::size_t rows = std::size_t(T * C), width = std::size_t(C);
    std::vector<float> keys(rows), values(rows), q(width);
    for (auto* v : {&keys, &values, &q})
        for (float& x : *v) x = normal(random);
    cache.reserve(T);
    for (int t = 0; t < T; ++t) cache.store(1, t, keys.data() + std::size_t(t * C), values.data() + std::size_t(t * C));
    if (half)
        for (auto* v : {&keys, &values})
            for (float& x : *v) x = roundToHalf(x);
    for (int head = 0; head < config.heads; ++head) {
        const std::size_t probCount = std::size_t(config.heads * T);
        std::vector<float> want(width), got(width), wantProbs(probCount), gotProbs(probCount), scores;
        cpu::attendHead(q.data(), keys.data(), values.data(), T, C, config.heads, head, 0.125f, want.data(),
                        wantProbs.data(), scores);
        cache.attend(1, q.data(), T, head, 0.125f, got.data(), gotProbs.data(), scores);
        EXPECT_EQ(got, want) << "head " << head;
        EXPECT_EQ(gotProbs, wantProbs) << "head " << head;
    }
}

TEST(CpuKvCache, PagesReadAsOneArray) { expectAttentionAsOneArray(false); }
TEST(CpuKvCache, HalfRowsReadAsTheirRoundedFloats) { expectAttentionAsOneArray(true); }

TEST(CpuKvCache, TheHalfCacheIsPlannedAtHalfTheBytes) {
    ModelConfig config;  // GPT-2 124M
    const std::int64_t full = cpu::KvCache::bytesAt(config, false, config.contextLength);
    EXPECT_EQ(full, 2LL * 12 * 1024 * 768 * 4);
    EXPECT_EQ(cpu::KvCache::bytesAt(config, true, config.contextLength), full / 2);
    EXPECT_EQ(CpuModel::plannedBytes(config, false) - CpuModel::plannedBytes(config, true), full / 2);
    EXPECT_EQ(cpu::KvCache::bytesAt(config, false, 1), 2LL * 12 * 64 * 768 * 4) << "one page of 64 positions";
}

}  // namespace
}  // namespace gpt2
