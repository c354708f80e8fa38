#include "model/ops.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace gpt2 {

Pass embeddingPass(ProgramCache& programs, Texture& out, const Texture& ids, const Texture& wte, const Texture& wpe) {
    return Pass(programs, "embedding.frag", "", {&out}, {{"u_ids", &ids}, {"u_wte", &wte}, {"u_wpe", &wpe}});
}

void setInputRowOffset(Pass& pass, int offset) { pass.set("u_in_row_offset", offset); }

namespace {
std::optional<Pass> momentsPass(ProgramCache& programs, Texture* moments, const Texture& x, int cols, int splitTexels) {
    if (!moments || splitTexels <= 0) return std::nullopt;
    if (moments->layout().texelsPerRow != 1)
        fail("layer norm: the moments texture ", moments->name(), " must hold one texel per row");
    const int inTexels = x.layout().texelsPerRow;
    const int texels = splitInstanceTexels(inTexels, splitTexels);
    if (moments->rows() < x.rows())
        fail("layer norm: the moments texture ", moments->name(), " has ", moments->rows(), " rows, fewer than ", x.name());
    Pass pass(programs, "layer_norm_moments.frag", "#define SPLIT_TEXELS " + std::to_string(texels) + "\n", {moments},
              {{"u_x", &x}}, inTexels / texels);
    pass.set("u_cols", cols);
    return pass;
}

Pass normalizePass(ProgramCache& programs, Texture& out, const Texture& x, const Texture& gamma, const Texture& beta,
                   int cols, float eps, const Texture* moments) {
    PassInputs inputs{{"u_x", &x}, {"u_gamma", &gamma}, {"u_beta", &beta}};
    if (moments) inputs.push_back({"u_moments", moments});
    Pass pass(programs, "layer_norm.frag", moments ? "#define ROW_MOMENTS 1\n" : "", {&out}, inputs);
    pass.set("u_cols", cols).set("u_eps", eps).set("u_in_row_offset", 0);
    return pass;
}
}  // namespace

LayerNormOp::LayerNormOp(ProgramCache& programs, Texture& out, const Texture& x, const Texture& gamma,
                         const Texture& beta, int cols, float eps, Texture* moments, int splitTexels)
    : x_(x),
      folded_{moments, &gamma, &beta, cols, eps},
      moments_(momentsPass(programs, moments, x, cols, splitTexels)),
      normalize_(normalizePass(programs, out, x, gamma, beta, cols, eps, moments_ ? moments : nullptr)) {}

void LayerNormOp::run(int rowBegin, int rowEnd, int inputRowOffset) {
    if (moments_) moments_->run(rowBegin + inputRowOffset, rowEnd + inputRowOffset);
    setInputRowOffset(normalize_, inputRowOffset);
    normalize_.run(rowBegin, rowEnd);
}

void LayerNormOp::runMoments(int rowBegin, int rowEnd) {
    if (!moments_) fail("layer norm: runMoments needs the moments pass (a moments texture and split-K)");
    moments_->run(rowBegin, rowEnd);
}

int splitInstanceTexels(int texels, int splitTexels) {
    int n = std::min(splitTexels, texels);
    while (texels % n != 0) --n;
    return n;
}

Epilogue activationEpilogue(Activation activation) {
    switch (activation) {
        case Activation::GeluTanh: return Epilogue::GeluTanh;
        case Activation::GeluErf: return Epilogue::GeluErf;
        case Activation::Relu: return Epilogue::Relu;
    }
    return Epilogue::None;
}

bool canTakeInputFromVertex(const MatmulSpec& spec) {
    constexpr int kGuaranteedVaryingVectors = 15;  // GL_MAX_VARYING_VECTORS of OpenGL ES 3.0 at least
    return spec.splitTexels > 0 &&
           splitInstanceTexels(spec.x->layout().texelsPerRow, spec.splitTexels) + 1 <= kGuaranteedVaryingVectors;
}

Pass matmulPass(ProgramCache& programs, std::vector<Texture*> outputs, const MatmulSpec& spec) {
    if (!spec.x || !spec.weight) fail("matmul: needs an input and a weight");
    if (outputs.size() != 1 && outputs.size() != 3) fail("matmul: needs one or three outputs");
    const int inTexels = spec.x->layout().texelsPerRow;
    const int weightInRows = spec.transposedWeight ? spec.weight->layout().texelsPerRow * 4 : spec.weight->rows();
    if (weightInRows != inTexels * 4)
        fail("matmul into ", outputs[0]->name(), ": weight ", spec.weight->name(), " has ", weightInRows,
             " input rows, input ", spec.x->name(), " has ", inTexels * 4, " padded columns");

    std::string defines = "#define PARTS " + std::to_string(outputs.size()) + "\n";
    defines += "#define ACTIVATION " + std::to_string(int(spec.activation)) + "\n";
    defines += "#define INPUT_ACTIVATION " + std::to_string(int(spec.inputActivation)) + "\n";
    if (spec.inputLayerNorm && spec.inputActivation != Epilogue::None)
        fail("matmul into ", outputs[0]->name(), ": an input LayerNorm and an input activation cannot be combined");
    if (spec.inputFromVertex && !canTakeInputFromVertex(spec))
        fail("matmul into ", outputs[0]->name(), ": input from the vertex shader needs split-K of 1 to 14 input texels "
             "per instance (15 varying vectors), got splitTexels ", spec.splitTexels);
    int instances = 1;
    if (spec.splitTexels > 0) {
        if (spec.activation != Epilogue::None)
            fail("matmul into ", outputs[0]->name(), ": a split-K matmul cannot apply an activation to its sums; "
                 "apply it as the consumer's inputActivation");
        const int texels = splitInstanceTexels(inTexels, spec.splitTexels);
        instances = inTexels / texels;
        defines += "#define SPLIT_TEXELS " + std::to_string(texels) + "\n";
    }
    if (spec.bias) defines += "#define BIAS 1\n";
    if (spec.residual) defines += "#define RESIDUAL 1\n";
    if (spec.transposedWeight) defines += "#define TRANSPOSED_WEIGHT 1\n";
    if (spec.inputFromVertex) defines += "#define INPUT_FROM_VERTEX 1\n";
    if (spec.inputLayerNorm) defines += "#define INPUT_LAYER_NORM 1\n";

    PassInputs inputs{{"u_x", spec.x}, {"u_w", spec.weight}};
    if (const auto& ln = spec.inputLayerNorm)
        inputs.insert(inputs.end(), {{"u_moments", ln->moments}, {"u_gamma", ln->gamma}, {"u_beta", ln->beta}});
    if (spec.bias) inputs.push_back({"u_bias", spec.bias});
    if (spec.residual) inputs.push_back({"u_residual", spec.residual});
    Pass pass(programs, "matmul.frag", defines, outputs, inputs, instances,
              spec.inputFromVertex ? "matmul_row.vert" : ProgramCache::kFullscreenVertex);
    pass.set("u_in_row_offset", spec.inRowOffset).set("u_part_texels", outputs[0]->layout().texelsPerRow);
    if (const auto& ln = spec.inputLayerNorm) pass.set("u_cols", ln->cols).set("u_eps", ln->eps);
    if (spec.inputFromVertex) pass.limitRowsPerRun(1);
    return pass;
}

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

Pass topkBlockPass(ProgramCache& programs, Texture& blocks, const Texture& logits, const Texture& candidates, int vocab,
                   int blockTexels) {
    Pass pass(programs, "topk_block.frag", "", {&blocks}, {{"u_logits", &logits}, {"u_candidates", &candidates}});
    pass.set("u_vocab", vocab).set("u_block_texels", blockTexels).set("u_rank", 0);
    return pass;
}

Pass topkSelectPass(ProgramCache& programs, Texture& candidates, const Texture& blocks) {
    return Pass(programs, "topk_select.frag", "", {&candidates}, {{"u_blocks", &blocks}});
}

Pass topCandidateTokenPass(ProgramCache& programs, Texture& ids, const Texture& candidates) {
    return Pass(programs, "top_candidate_token.frag", "", {&ids}, {{"u_candidates", &candidates}});
}

}  // namespace gpt2
