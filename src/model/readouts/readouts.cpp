#include "model/readouts/readouts.h"

#include <algorithm>

#include "model/engine_matrices.h"

namespace gpt2 {
namespace {

// Ranks a first-level top-k fragment writes: as many render targets as a draw may write, in a power of
// two up to 8 (rows interleave over it, and the block lists' rows are a multiple).
int topkRanksPerFragment(const Tuning& tuning) {
    int ranks = 1;
    while (ranks < 8 && tuning.oneDrawWrites(2 * ranks)) ranks *= 2;
    return ranks;
}

ReadoutDecl declareShared(const ReadoutSite& site) {
    const Tuning& tuning = site.model.tuning();
    const ModelConfig& c = site.model.config();
    const EngineDims d = engineDims(c);
    Activations& t = site.activations;
    Texture& scored = t.addInterleaved("scored logits", std::max(TokenLogProbs::kRows, Lens::batchRows(tuning, c)),
                                       d.vocabRows, tuning.rowsPerFragment);  // [rows, V]
    const int ranks = topkRanksPerFragment(tuning), blockColumns = topkBlockColumns(scored.layout().texelsPerRow);
    return {.model = site.model,
            .activations = t,
            .plan = site.plan,
            .head = site.head,
            .ids = site.ids,
            .logits = site.logits,
            .topk = {.blocks = t.addInterleaved("top-k blocks", TopkScratch::kBlockRows, blockColumns, ranks),
                     .heads = t.addInterleaved("top-k block heads", TopkScratch::kBlockRows, blockColumns, ranks),
                     .seen = t.add("seen tokens", 1, d.vocabRows),                    // [1, V]
                     .allowed = t.add("allowed tokens", 1, (d.vocabRows + 15) / 16),  // [1, V / 16]: 16 bits a float
                     .ranksPerFragment = ranks},
            .scored = scored};
}

}  // namespace

Readouts::Readouts(const ReadoutSite& site) : Readouts(declareShared(site)) {}

Readouts::Readouts(const ReadoutDecl& decl)
    : next_(decl), attention_(decl), tokenLogProbs_(decl), hiddenStates_(decl), live_(decl) {}

}  // namespace gpt2
