#include "model/ops/attention.h"

#include <string>

namespace gpt2 {
namespace {
Pass attentionPass(ProgramCache& programs, const char* shader, Texture& out, const PassInputs& inputs,
                   const AttentionShape& shape) {
    const std::string defines = "#define HEADS " + std::to_string(shape.heads) + "\n#define HEAD_TEXELS " +
                                std::to_string(shape.headTexels) + "\n";
    Pass pass(programs, shader, defines, {&out}, inputs);
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
                         const Texture& vCache, const AttentionShape& shape, float scale)
    : heads_(shape.heads),
      scores_(attentionScoresPass(programs, scores, q, kCache, shape, scale)),
      apply_(attentionApplyPass(programs, out, scores, vCache, shape)) {}

void AttentionOp::runScores(int pos0, int count) {
    setAttentionPosition(scores_, pos0);
    scores_.run(0, count * heads_);
}

void AttentionOp::run(int pos0, int count) {
    runScores(pos0, count);
    setAttentionPosition(apply_, pos0);
    apply_.run(pos0, pos0 + count);
}

}  // namespace gpt2
