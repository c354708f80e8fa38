#pragma once
// The CPU backend's K/V cache: every layer's keys and values at absolute positions, in pages of 64
// positions added as a text grows. A short text never pays for the whole context, and growing copies
// nothing and frees nothing (a wasm heap never shrinks: doubling vectors left their old blocks behind
// and took GPT-2 124M's heap to twice the cache's size). Rows are fp32, or fp16 with kvCache: 'fp16'
// (half the bytes; keys and values rounded to nearest even on the way in).
#include <cstdint>
#include <vector>

#include "format/model_config.h"

namespace gpt2::cpu {

class KvCache {
public:
    static constexpr int kPagePositions = 64;

    KvCache(const ModelConfig& config, bool half);
    // Bytes of the cache at `positions` (whole pages).
    static std::int64_t bytesAt(const ModelConfig& config, bool half, int positions);

    // Pages for positions [0, positions).
    void reserve(int positions);
    // Position `pos` of layer `layer`: its key and value rows, n_embd each.
    void store(int layer, int pos, const float* key, const float* value);
    // Causal attention of query `q` (n_embd wide) over positions [0, T) of `layer`, for one head (see
    // attendRows in cpu_ops.h).
    void attend(int layer, const float* q, int T, int head, float scale, float* out, float* probs,
                std::vector<float>& scores) const;
    bool half() const { return half_; }

private:
    template <class Value>
    struct Pages {
        std::vector<std::vector<Value>> keys, values;  // [page][kPagePositions * n_embd]
    };
    template <class Value>
    void grow(std::vector<Pages<Value>>& layers, int pages);
    // Position `pos`'s row in a layer's pages of keys or values.
    template <class Rows>
    auto rowAt(Rows& rows, int pos) const {
        return rows[std::size_t(pos / kPagePositions)].data() + std::size_t(pos % kPagePositions) * std::size_t(width_);
    }

    int width_, heads_;
    bool half_;
    int pages_ = 0;
    std::vector<Pages<float>> floats_;
    std::vector<Pages<std::uint16_t>> halves_;
};

}  // namespace gpt2::cpu
