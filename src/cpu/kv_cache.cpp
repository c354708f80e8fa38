#include "cpu/kv_cache.h"

#include <algorithm>

#include "cpu/cpu_ops.h"
#include "util/half.h"

namespace gpt2::cpu {

KvCache::KvCache(const ModelConfig& config, bool half) : width_(config.embedDim), heads_(config.heads), half_(half) {
    if (half_)
        halves_.resize(std::size_t(config.layers));
    else
        floats_.resize(std::size_t(config.layers));
}

std::int64_t KvCache::bytesAt(const ModelConfig& config, bool half, int positions) {
    const std::int64_t pages = (positions + kPagePositions - 1) / kPagePositions;
    return 2 * std::int64_t(config.layers) * pages * kPagePositions * config.embedDim * (half ? 2 : 4);
}

template <class Value>
void KvCache::grow(std::vector<Pages<Value>>& layers, int pages) {
    for (Pages<Value>& layer : layers)
        for (auto* rows : {&layer.keys, &layer.values})
            while (int(rows->size()) < pages) rows->emplace_back(std::size_t(kPagePositions) * std::size_t(width_));
}

void KvCache::reserve(int positions) {
    const int pages = (positions + kPagePositions - 1) / kPagePositions;
    if (pages <= pages_) return;
    if (half_)
        grow(halves_, pages);
    else
        grow(floats_, pages);
    pages_ = pages;
}

void KvCache::store(int layer, int pos, const float* key, const float* value) {
    if (!half_) {
        Pages<float>& p = floats_[std::size_t(layer)];
        std::copy_n(key, width_, rowAt(p.keys, pos));
        std::copy_n(value, width_, rowAt(p.values, pos));
        return;
    }
    Pages<std::uint16_t>& p = halves_[std::size_t(layer)];
    std::transform(key, key + width_, rowAt(p.keys, pos), floatToHalf);
    std::transform(value, value + width_, rowAt(p.values, pos), floatToHalf);
}

void KvCache::attend(int layer, const float* q, int T, int head, float scale, float* out, float* probs,
                     std::vector<float>& scores) const {
    const auto run = [&](const auto& pages) {
        attendRows(
            q, [&](int t) { return rowAt(pages.keys, t); }, [&](int t) { return rowAt(pages.values, t); }, T, width_,
            heads_, head, scale, out, probs, scores);
    };
    if (half_)
        run(halves_[std::size_t(layer)]);
    else
        run(floats_[std::size_t(layer)]);
}

}  // namespace gpt2::cpu
