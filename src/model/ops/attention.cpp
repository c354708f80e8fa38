#include "model/ops/attention.h"

#include <string>

#include "util/error.h"

namespace gpt2 {
namespace {
std::string headDefines(const AttentionShape& shape) {
    return "#define HEADS " + std::to_string(shape.heads) + "\n#define HEAD_TEXELS " + std::to_string(shape.headTexels) + "\n";
}

Pass attentionPass(ProgramCache& programs, const char* shader, Texture& out, const PassInputs& inputs,
                   const AttentionShape& shape) {
    Pass pass(programs, shader, headDefines(shape), {&out}, inputs);
    pass.set("u_pos0", 0);
    return pass;
}
}  // namespace

Pass attentionScoresPass(ProgramCache& programs, Texture& scores, const Texture& q, const Texture& kCache,
                         const AttentionShape& shape, float scale) {
    Pass pass = attentionPass(programs, "attention_scores.frag", scores, {{"u_q", &q}, {"u_k", &kCache}}, shape);
    pass.set("u_scale", scale);
    return pass;
}

Pass attentionApplyPass(ProgramCache& programs, Texture& out, const Texture& scores, const Texture& vCache,
                        const AttentionShape& shape) {
    return attentionPass(programs, "attention_apply.frag", out, {{"u_scores", &scores}, {"u_v", &vCache}}, shape);
}

Pass attentionProbsPass(ProgramCache& programs, Texture& out, const Texture& scores, const AttentionShape& shape) {
    return attentionPass(programs, "attention_probs.frag", out, {{"u_scores", &scores}}, shape);
}

void setAttentionPosition(Pass& pass, int pos0) { pass.set("u_pos0", pos0); }

AttentionOp::AttentionOp(ProgramCache& programs, Texture& out, Texture& scores, const Texture& q, const Texture& kCache,
                         const Texture& vCache, const AttentionShape& shape, float scale, const KeyBlocks* keyBlocks)
    : heads_(shape.heads),
      scores_(attentionScoresPass(programs, scores, q, kCache, shape, scale)),
      apply_(attentionApplyPass(programs, out, scores, vCache, shape)) {
    if (!keyBlocks || keyBlocks->blockKeys <= 0) return;
    if (keyBlocks->blockKeys % 4 != 0) fail("attention: blocks of keys must be whole texels (a multiple of 4), got ", keyBlocks->blockKeys);
    const int blocks = (kCache.rows() + keyBlocks->blockKeys - 1) / keyBlocks->blockKeys;
    if (keyBlocks->partial->rows() < shape.heads * blocks)
        fail("attention: ", keyBlocks->partial->name(), " has ", keyBlocks->partial->rows(), " rows, fewer than ",
             shape.heads, " heads x ", blocks, " blocks");
    blockKeys_ = keyBlocks->blockKeys;
    const std::string block = "#define BLOCK_KEYS " + std::to_string(blockKeys_) + "\n";
    partial_.emplace(Pass(programs, "attention_partial.frag", headDefines(shape) + block,
                          {keyBlocks->partial, keyBlocks->stats}, {{"u_scores", &scores}, {"u_v", &vCache}}));
    merge_.emplace(Pass(programs, "attention_merge.frag", headDefines(shape), {&out},
                        {{"u_partial", keyBlocks->partial}, {"u_stats", keyBlocks->stats}}));
}

void AttentionOp::runScores(int pos0, int count) {
    setAttentionPosition(scores_, pos0);
    scores_.run(0, count * heads_);
}

void AttentionOp::run(int pos0, int count) {
    runScores(pos0, count);
    if (count == 1 && blockKeys_ > 0 && pos0 + 1 > blockKeys_) {
        const int blocks = (pos0 + blockKeys_) / blockKeys_;
        partial_->set("u_pos0", pos0).set("u_blocks", blocks).run(0, heads_ * blocks);
        merge_->set("u_pos0", pos0).set("u_blocks", blocks).run(pos0, pos0 + 1);
        return;
    }
    setAttentionPosition(apply_, pos0);
    apply_.run(pos0, pos0 + count);
}

}  // namespace gpt2
