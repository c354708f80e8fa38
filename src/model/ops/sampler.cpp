#include "model/ops/sampler.h"

#include "model/ops/matmul.h"
#include "model/ops/pointwise.h"
#include "util/error.h"

namespace gpt2 {

SamplerOp::SamplerOp(ProgramCache& programs, const Texture& logits, const Texture& ids, Texture& seen,
                     Texture& seenScratch, const Texture& allowed, Texture& blocks, Texture& heads, Texture& candidates,
                     Texture& chosen, int vocab, int ranksPerFragment)
    : topk_(programs, candidates, blocks, heads, logits, seen, allowed, vocab, ranksPerFragment),
      candidates_(candidates),
      chosen_(chosen),
      markSeen_(programs, "seen_tokens.frag", "", {&seenScratch}, {{"u_ids", &ids}, {"u_before", &seen}}),
      copySeen_(activationPass(programs, seen, seenScratch, int(Epilogue::None))),
      choose_(programs, "sample_choose.frag", "", {&chosen}, {{"u_candidates", &candidates}}) {}

void SamplerOp::markSeen(int from, int to) {
    markSeen_.set("u_from", from).set("u_to", to).run(0, 1);
    copySeen_.run(0, 1);
}

Texture& SamplerOp::run(const TokenSampling& s, int draw, int draws) {
    TopkWarp warp;
    warp.temperature = s.greedy() ? 1.0f : s.temperature;
    warp.repetitionPenalty = s.repetitionPenalty;
    warp.masked = s.allowed != nullptr;
    warp.seed = s.seed;
    warp.draw = draw;
    if (s.greedy() && draws != 1) fail("sampling: greedy gives one token, asked for ", draws, " draws");
    if (s.greedy() || s.gumbel()) {
        warp.gumbel = s.gumbel();
        warp.sharedRow = true;
        topk_.run(1, draws, 0, warp);
        return candidates_;
    }
    const int k = s.topK > 0 ? s.topK : kMaxTopk;
    warp.logSumExp = s.topK == 0;
    topk_.run(k, 1, 0, warp);
    choose_.set("u_k", k)
        .set("u_over_candidates", s.topK > 0 ? 1 : 0)
        .set("u_top_p", s.topP)
        .set("u_seed", seedHalves(s.seed))
        .set("u_draw", draw)
        .run(0, draws);
    return chosen_;
}

}  // namespace gpt2
