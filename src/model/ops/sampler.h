#pragma once
// Choosing tokens on the GPU as Hugging Face's sampling does: repetition penalty, temperature, top-k,
// top-p, then a draw; only the chosen id is read back, and it can feed the next step without leaving
// the GPU. Three ways, by what the options need:
// - greedy: the best (penalised) logit, a one-candidate search;
// - temperature alone: the best of logit / T plus Gumbel noise, also a one-candidate search, which
//   is an exact draw from softmax(logit / T);
// - top-k or top-p: a search of k candidates (kMaxTopk for top-p alone, with the vocabulary's
//   log Σ exp), then shaders/sample_choose.frag draws among them. Top-p alone whose candidates do not
//   reach p gives id -1: the caller samples from all the logits instead (never approximately).
// Draws are numbered; the numbers of draw d come from a hash of (seed, d), so a draw needs no state
// and the CPU sampler (src/engine/sampling.h) reproduces the pick among candidates.
#include <cstdint>
#include <vector>

#include "gl/pass.h"
#include "model/ops/topk.h"

namespace gpt2 {

struct TokenSampling {
    float temperature = 0.0f;  // 0: greedy
    int topK = 0;              // 0: off; else 1 .. kMaxTopk
    float topP = 1.0f;
    float repetitionPenalty = 1.0f;
    std::uint64_t seed = 0;
    // The tokens a constrained draw may take (a constraint's, without logitBias's bans), bit i % 32 of
    // word i / 32; null: all. `allowedVersion` changes whenever they do, so that they are uploaded once.
    const std::vector<std::uint32_t>* allowed = nullptr;
    int allowedVersion = 0;

    bool greedy() const { return temperature == 0.0f; }
    // Temperature alone: Gumbel noise over the whole vocabulary.
    bool gumbel() const { return !greedy() && topK == 0 && topP >= 1.0f; }
    // Whether the GPU may decline the draw (id -1): top-p alone.
    bool mayDecline() const { return !greedy() && topK == 0 && topP < 1.0f; }
};

class SamplerOp {
public:
    // `logits`: draws read row 0. `ids`: the sequence's token ids, one per row. `seen` and
    // `seenScratch`: one row of vocabulary texels each. `blocks`, `heads`, `candidates` and ranksPerFragment as
    // TopkOp's, the candidates a texel per draw wide; `chosen`: a row of one texel per draw.
    // `allowed`: TopkOp's.
    SamplerOp(ProgramCache& programs, const Texture& logits, const Texture& ids, Texture& seen, Texture& seenScratch,
              const Texture& allowed, Texture& blocks, Texture& heads, Texture& candidates, Texture& chosen, int vocab,
              int ranksPerFragment);
    // The tokens the repetition penalty applies to: ids[from, to) join those marked, or with from 0
    // replace them.
    void markSeen(int from, int to);
    // Draws [draw, draw + draws) of `s`: (key, id, ...) of draw + d in the returned texture, at row 0,
    // texel d (the candidates: greedy, or one search per draw of temperature alone) or at row d (the
    // chosen: one search, a pick per draw).
    Texture& run(const TokenSampling& s, int draw, int draws = 1);
    // The search alone, over the plain logits (NextToken::topCandidates).
    TopkOp& topk() { return topk_; }

private:
    TopkOp topk_;
    Texture &candidates_, &chosen_;
    Pass markSeen_, copySeen_, choose_;
};

}  // namespace gpt2
