#include "model/ops.h"

#include <string>

#include "util/error.h"

namespace gpt2 {

Pass embeddingPass(ProgramCache& programs, Texture& out, const Texture& ids, const Texture& wte, const Texture& wpe) {
    Pass pass(programs.get("embedding.frag"), {&out});
    pass.input("u_ids", ids).input("u_wte", wte).input("u_wpe", wpe);
    return pass;
}

Pass rowStatsPass(ProgramCache& programs, Texture& out, const Texture& x, int cols, float eps) {
    Pass pass(programs.get("row_stats.frag"), {&out});
    pass.input("u_x", x).set("u_cols", cols).set("u_eps", eps);
    return pass;
}

Epilogue activationEpilogue(Activation activation) {
    switch (activation) {
        case Activation::GeluTanh: return Epilogue::GeluTanh;
        case Activation::GeluErf: return Epilogue::GeluErf;
        case Activation::Relu: return Epilogue::Relu;
    }
    return Epilogue::None;
}

Pass matmulPass(ProgramCache& programs, std::vector<Texture*> outputs, const MatmulSpec& spec) {
    if (!spec.x || !spec.weight) fail("matmul: needs an input and a weight");
    if (outputs.size() != 1 && outputs.size() != 3) fail("matmul: needs one or three outputs");
    const int inTexels = spec.x->layout().texelsPerRow;
    const int weightInRows = spec.transposedWeight ? spec.weight->layout().texelsPerRow * 4 : spec.weight->layout().rows;
    if (weightInRows != inTexels * 4)
        fail("matmul into ", outputs[0]->name(), ": weight ", spec.weight->name(), " has ", weightInRows,
             " input rows, input ", spec.x->name(), " has ", inTexels * 4, " padded columns");

    std::string defines = "#define PARTS " + std::to_string(outputs.size()) + "\n";
    defines += "#define ACTIVATION " + std::to_string(int(spec.activation)) + "\n";
    if (spec.stats) defines += "#define NORM_INPUT 1\n";
    if (spec.bias) defines += "#define BIAS 1\n";
    if (spec.residual) defines += "#define RESIDUAL 1\n";
    if (spec.transposedWeight) defines += "#define TRANSPOSED_WEIGHT 1\n";

    Pass pass(programs.get("matmul.frag", defines), outputs);
    pass.input("u_x", *spec.x).input("u_w", *spec.weight);
    if (spec.stats) pass.input("u_stats", *spec.stats).input("u_gamma", *spec.gamma).input("u_beta", *spec.beta);
    if (spec.bias) pass.input("u_bias", *spec.bias);
    if (spec.residual) pass.input("u_residual", *spec.residual);
    pass.set("u_in_row_offset", spec.inRowOffset).set("u_part_texels", outputs[0]->layout().texelsPerRow);
    return pass;
}

namespace {
Pass attentionPass(ProgramCache& programs, const char* shader, Texture& out, const AttentionShape& shape) {
    Pass pass(programs.get(shader), {&out});
    pass.set("u_heads", shape.heads).set("u_head_texels", shape.headTexels).set("u_pos0", 0);
    return pass;
}
}  // namespace

Pass attentionScoresPass(ProgramCache& programs, Texture& scores, const Texture& q, const Texture& kCache,
                         const AttentionShape& shape, float scale) {
    Pass pass = attentionPass(programs, "attention_scores.frag", scores, shape);
    pass.input("u_q", q).input("u_k", kCache).set("u_scale", scale);
    return pass;
}

Pass attentionApplyPass(ProgramCache& programs, Texture& out, const Texture& scores, const Texture& vCache,
                        const AttentionShape& shape) {
    Pass pass = attentionPass(programs, "attention_apply.frag", out, shape);
    pass.input("u_scores", scores).input("u_v", vCache);
    return pass;
}

Pass attentionProbsPass(ProgramCache& programs, Texture& out, const Texture& scores, const AttentionShape& shape) {
    Pass pass = attentionPass(programs, "attention_probs.frag", out, shape);
    pass.input("u_scores", scores);
    return pass;
}

void setAttentionPosition(Pass& pass, int pos0) { pass.set("u_pos0", pos0); }

Pass topkBlockPass(ProgramCache& programs, Texture& blocks, const Texture& logits, const Texture& candidates, int vocab,
                   int blockTexels) {
    Pass pass(programs.get("topk_block.frag"), {&blocks});
    pass.input("u_logits", logits).input("u_candidates", candidates).set("u_vocab", vocab).set("u_block_texels", blockTexels);
    pass.set("u_rank", 0);
    return pass;
}

Pass topkSelectPass(ProgramCache& programs, Texture& candidates, const Texture& blocks) {
    Pass pass(programs.get("topk_select.frag"), {&candidates});
    pass.input("u_blocks", blocks);
    return pass;
}

}  // namespace gpt2
