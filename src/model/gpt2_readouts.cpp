// What the model reads back besides the next token's logits and candidates: attention probabilities,
// the log-probability of each position's next token, the residual stream and the logit lens.
#include <algorithm>
#include <cmath>

#include "model/gpt2_model.h"
#include "util/error.h"

namespace gpt2 {

std::vector<float> Gpt2Model::attention(const std::vector<int>& ids, int layer) {
    if (layer < 0 || layer >= config_.layers) fail("attention: layer ", layer, " outside [0, ", config_.layers, ")");
    chunkNext_ = chunkEnd_ = 0;  // a forward in progress cannot go on over the rewritten id rows
    uploadIds(ids, 0);
    const int count = int(ids.size()), heads = config_.heads;
    // Rows are (query, head); a chunk's scores become its rows of the probabilities.
    Texture probs(TensorLayout::make(count * heads, count, tuning_.caps.limits, "attention probabilities"),
                  TexelFormat::Float32, "attention probabilities");
    Pass probsPass = attentionProbsPass(programs_, probs, *scores_, shape_);
    for (int start = 0; start < count; start += tuning_.prefillChunk) {
        const int n = std::min(tuning_.prefillChunk, count - start);
        embed_->run(start, start + n);
        runBlocks(layer, start, n);
        runAttentionScores(layer, start, n);
        setAttentionPosition(probsPass, start);
        probsPass.run(start * heads, (start + n) * heads);
    }
    const std::vector<float> rows = probs.readRows(0, count * heads);
    readbackBytes_ += std::int64_t(rows.size()) * 4;
    std::vector<float> out(rows.size());  // heads x T x T
    for (int q = 0; q < count; ++q)
        for (int h = 0; h < heads; ++h)
            std::copy_n(rows.begin() + (std::int64_t(q) * heads + h) * count, count, out.begin() + (std::int64_t(h) * count + q) * count);
    return out;
}

std::vector<float> Gpt2Model::tokenLogProbs(const std::vector<int>& ids) {
    if (ids.size() < 2) fail("tokenLogProbs: needs at least 2 tokens (the first is only context), got ", ids.size());
    beginForward(ids, 0);
    const int count = int(ids.size());
    std::vector<float> out;
    for (int start = 0; start < count; start += tuning_.prefillChunk) {
        const int n = std::min(tuning_.prefillChunk, count - start);
        embed_->run(start, start + n);
        runBlocks(config_.layers, start, n);
        // Rows of this chunk only (the later ones have not run yet), and no last position: it has no next token.
        const int end = std::min(start + n, count - 1);
        for (int row = start; row < end; row += kScoreRows) {
            const int rows = std::min(kScoreRows, end - row);
            scoreHead_->run(0, row, rows);
            tokenLogProb_->set("u_first", row).run(0, rows);
            const std::vector<float> values = logProbs_->readRows(0, rows);
            readbackBytes_ += std::int64_t(rows) * 16;
            out.insert(out.end(), values.begin(), values.end());
        }
    }
    chunkNext_ = chunkEnd_ = 0;
    lastPosition_ = -1;  // no position's logits are in the logits texture
    return out;
}

std::vector<float> Gpt2Model::hiddenStates(const std::vector<int>& ids, int layer) {
    if (layer < 0 || layer >= config_.layers) fail("hiddenStates: layer ", layer, " outside [0, ", config_.layers, ")");
    beginForward(ids, 0);
    const int count = int(ids.size());
    std::vector<float> out;
    for (int start = 0; start < count; start += tuning_.prefillChunk) {
        const int n = std::min(tuning_.prefillChunk, count - start);
        embed_->run(start, start + n);
        runBlocks(layer + 1, start, n);
        const std::vector<float> rows = residual_->readRows(start, n);
        readbackBytes_ += std::int64_t(rows.size()) * 4;
        out.insert(out.end(), rows.begin(), rows.end());
    }
    chunkNext_ = chunkEnd_ = 0;
    lastPosition_ = -1;  // the later blocks did not run: no logits, and the cache holds no sequence
    return out;
}

std::vector<std::vector<Gpt2Model::LensCell>> Gpt2Model::lens(const std::vector<int>& ids, int k) {
    if (k == 0) k = kDefaultLensTopK;
    if (k < 1 || k > kMaxCandidates || k > config_.vocabSize)
        fail("lens: top-k must be in [1, ", std::min(kMaxCandidates, config_.vocabSize), "], got ", k);
    beginForward(ids, 0);
    const int count = int(ids.size());
    std::vector<std::vector<LensCell>> out(std::size_t(config_.layers), std::vector<LensCell>(std::size_t(count)));
    for (int start = 0; start < count; start += tuning_.prefillChunk) {
        const int n = std::min(tuning_.prefillChunk, count - start);
        embed_->run(start, start + n);
        for (int l = 0; l < config_.layers; ++l) {
            runLayer(l, start, n);
            for (int row = start; row < start + n; row += kScoreRows) {
                const int rows = std::min(kScoreRows, start + n - row);
                scoreHead_->run(0, row, rows);
                lensTopk_->run(k, rows);
                rowLogSumExp_->run(0, rows);
                const std::vector<float> candidates = lensCandidates_->readRows(0, k);  // [k][kScoreRows (logit, id)]
                const std::vector<float> logSumExp = lensLogSumExp_->readRows(0, rows);
                readbackBytes_ += std::int64_t(k) * kScoreRows * 16 + std::int64_t(rows) * 16;
                for (int r = 0; r < rows; ++r) {
                    LensCell& cell = out[std::size_t(l)][std::size_t(row + r)];
                    for (int rank = 0; rank < k; ++rank) {
                        const float* c = &candidates[(std::size_t(rank) * kScoreRows + std::size_t(r)) * 4];
                        cell.ids.push_back(int(c[1]));
                        cell.probs.push_back(std::exp(c[0] - logSumExp[std::size_t(r)]));
                    }
                }
            }
        }
    }
    lmHead_->run(0, count - 1, 1);
    lastPosition_ = count - 1;
    chunkNext_ = chunkEnd_ = 0;
    return out;
}

}  // namespace gpt2
