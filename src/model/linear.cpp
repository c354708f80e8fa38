#include "model/linear.h"

#include "util/error.h"

namespace gpt2 {

void Linear::run(int outRow, int inRow, int count) {
    const bool oneRow = count == 1 && row_;
    if (!oneRow && !rows_) fail("forward: a matmul declared for one row only was asked for ", count, " rows");
    Pass& pass = oneRow ? *row_ : *rows_;
    // The one-row pass normalises x itself where the LayerNorm has row moments (LinearPlanner::linear).
    if (norm_ && oneRow && norm_->hasMoments()) {
        norm_->runMoments(inRow, inRow + 1);
        setInputRowOffset(pass, inRow - outRow);
    } else if (norm_) {
        // The LayerNorm writes the chunk's rows of its output, which the pass reads.
        norm_->run(0, count, inRow);
        setInputRowOffset(pass, -outRow);
    } else {
        setInputRowOffset(pass, inRow - outRow);
    }
    pass.run(outRow, outRow + count);
}

LinearPlanner::LinearPlanner(ProgramCache& programs, const Tuning& tuning, Activations& activations, float layerNormEps)
    : programs_(programs), tuning_(tuning), activations_(activations), eps_(layerNormEps) {}

LayerNormOp LinearPlanner::layerNorm(const Texture& x, const LayerNormWeights& weights, const Texture*& output) {
    const std::pair<int, int> shape{x.rows(), x.layout().cols};
    Texture*& normed = normed_[shape];
    if (!normed) normed = &activations_.add("layernorm output", tuning_.prefillChunk, shape.second);
    output = normed;
    Texture* moments = nullptr;
    if (tuning_.splitTexels > 0) {
        Texture*& m = moments_[shape];
        if (!m) m = &activations_.add("layernorm moments", shape.first, 4);
        moments = m;
    }
    return LayerNormOp(programs_, *normed, x, *weights.gamma, *weights.beta, shape.second, eps_, moments,
                       moments ? tuning_.splitFor(*moments) : 0);
}

Linear LinearPlanner::linear(const LinearDecl& decl) {
    if (decl.outputs.empty() || !decl.x) fail("linear: needs outputs and an input");
    Linear linear;
    MatmulSpec spec{decl.x, decl.weight.values, decl.bias, decl.residual};
    spec.weightScale = decl.weight.scales;
    spec.transposedWeight = decl.transposedWeight;
    spec.splitTexels = tuning_.splitFor(*decl.outputs[0]);
    if (auto it = deferred_.find(decl.x); it != deferred_.end()) {
        spec.inputActivation = it->second;
        deferred_.erase(it);
    }
    // A split sum cannot be activated: its consumer activates what it fetches.
    if (decl.activation != Epilogue::None) (spec.splitTexels > 0 ? deferred_[decl.outputs[0]] : spec.activation) = decl.activation;
    MatmulSpec row = spec;
    row.inputFromVertex = true;
    if (decl.norm) {
        linear.norm_.emplace(layerNorm(*decl.x, *decl.norm, spec.x));
        if (linear.norm_->hasMoments()) {
            row.inputLayerNorm = linear.norm_->inputLayerNorm();
        } else {
            row.x = spec.x;
        }
    }
    if (canTakeInputFromVertex(row)) linear.row_.emplace(matmulPass(programs_, decl.outputs, row));
    if (!decl.oneRowOnly || !linear.row_) linear.rows_.emplace(matmulPass(programs_, decl.outputs, spec));
    return linear;
}

void LinearPlanner::finish() const {
    for (const auto& [output, activation] : deferred_)
        fail("linear: the activation of ", output->name(), " was left to a consumer, and none reads it");
}

}  // namespace gpt2
