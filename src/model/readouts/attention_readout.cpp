#include "model/readouts/attention_readout.h"

#include <algorithm>

#include "model/ops/attention.h"
#include "model/readouts/readout_checks.h"
#include "util/error.h"

namespace gpt2 {

std::vector<float> AttentionReadout::run(const std::vector<int>& ids, int layer) {
    const ModelConfig& c = model_.config();
    checkReadoutLayer("attention", layer, c.layers);
    const int count = int(ids.size()), heads = c.heads, chunk = std::min(model_.tuning().prefillChunk, count);
    // Made for this call only: rows are (query, head) of a chunk, and a sequence's keys wide.
    Texture probs(TensorLayout::make(chunk * heads, count, model_.tuning().caps.limits, "attention probabilities"),
                  TexelFormat::Float32, "attention probabilities");
    AttentionProbsOp probsOp(model_.programs(), probs, model_.attentionScratch(), model_.attentionShape());
    std::vector<float> out(std::size_t(heads) * count * count);  // heads x T x T
    model_.runSequence(ids, layer, [&](int start, int n) {
        model_.runAttentionScores(layer, start, n);
        probsOp.run(start, n);
        const std::vector<float> rows = model_.readback().rows(probs, 0, n * heads);
        for (int q = 0; q < n; ++q)
            for (int h = 0; h < heads; ++h)
                std::copy_n(rows.begin() + (std::int64_t(q) * heads + h) * count, count,
                            out.begin() + (std::int64_t(h) * count + start + q) * count);
    });
    return out;
}

}  // namespace gpt2
