#include "model/linear.h"

#include <algorithm>

#include "model/ops/pointwise.h"
#include "util/error.h"

namespace gpt2 {

void Linear::run(int outRow, int inRow, int count) {
    const bool oneRow = count == 1 && !row_.empty();
    if (!oneRow && rows_.empty()) fail("forward: a matmul declared for one row only was asked for ", count, " rows");
    // Where a LayerNorm or activation pass runs, it writes the chunk's rows of its output from row
    // outRow % 2 on, so that every even output row reads an even row of it: with fp16 row pairs, a
    // row-tiled fragment then fetches its rows two at a time (matmul.frag, PAIRED_ROWS). The one-row
    // pass activates x itself, and normalises it itself where the LayerNorm has row moments, from the
    // moments pass or summing them itself (LinearPlanner::linear).
    int offset = inRow - outRow;
    const int first = outRow % 2;
    if (norm_ && oneRow && norm_->hasMoments()) {
        if (rowReadsMoments_) norm_->runMoments(inRow, inRow + 1);
    } else if (norm_) {
        norm_->run(first, first + count, inRow - first);
        offset = first - outRow;
    } else if (activate_ && !oneRow) {
        activate_->set("u_in_row_offset", inRow - first).run(first, first + count);
        offset = first - outRow;
    }
    if (oneRow) {
        for (Pass& pass : row_) {
            setInputRowOffset(pass, offset);
            pass.run(outRow, outRow + 1);
        }
        return;
    }
    if (tiledReadsPairs_ && offset % 2 != 0)
        fail("linear: the row-tiled passes read row pairs, and output row ", outRow, " would read input row ",
             outRow + offset);
    for (Pass& pass : rows_) setInputRowOffset(pass, offset);
    for (Pass& pass : tiled_) setInputRowOffset(pass, offset);
    runRows(outRow, outRow + count);
}

void Linear::runRows(int begin, int end) {
    const auto runAll = [](std::vector<Pass>& passes, int from, int to) {
        for (Pass& pass : passes) pass.run(from, to);
    };
    const int first = (begin + tileRows_ - 1) / tileRows_ * tileRows_, last = end / tileRows_ * tileRows_;
    if (tiled_.empty() || first >= last) return runAll(rows_, begin, end);
    if (begin < first) runAll(rows_, begin, first);
    runAll(tiled_, first, last);
    if (last < end) runAll(rows_, last, end);
}

LinearPlanner::LinearPlanner(ProgramCache& programs, const Tuning& tuning, Activations& activations, float layerNormEps)
    : programs_(programs), tuning_(tuning), activations_(activations), eps_(layerNormEps) {}

Texture& LinearPlanner::chunkInput(const std::string& name, int cols) {
    const int rows = tuning_.prefillChunk + 1;  // from row outRow % 2 on (Linear::run)
    return tuning_.halfPromptInputs ? activations_.addHalfPairs(name, rows, cols) : activations_.add(name, rows, cols);
}

LayerNormOp LinearPlanner::layerNorm(const Texture& x, const LayerNormWeights& weights, const Texture*& output) {
    const std::pair<int, int> shape{x.rows(), x.layout().cols};
    Texture*& normed = normed_[shape];
    if (!normed) normed = &chunkInput("layernorm output", shape.second);
    output = normed;
    Texture* moments = nullptr;
    if (tuning_.splitTexels > 0) {
        Texture*& m = moments_[shape];
        if (!m) m = &activations_.add("layernorm moments", shape.first, 4);
        moments = m;
    }
    return LayerNormOp(programs_, *normed, x, *weights.gamma, *weights.beta, shape.second, eps_, moments,
                       moments ? tuning_.splitFor({moments}) : 0);
}

Linear LinearPlanner::linear(const LinearDecl& decl) {
    if (decl.outputs.empty() || !decl.x) fail("linear: needs outputs and an input");
    Linear linear;
    MatmulSpec spec{decl.x, decl.weight.values, decl.bias, decl.residual};
    spec.weightScale = decl.weight.scales;
    spec.weightOffset = decl.weight.offsets;
    spec.weightBlockTexels = decl.weight.blockTexels;
    spec.transposedWeight = decl.transposedWeight;
    spec.addend = decl.addend;
    spec.columnMask = decl.columnMask;
    spec.splitTexels = tuning_.splitFor(decl.outputs);
    if (auto it = deferred_.find(decl.x); it != deferred_.end()) {
        spec.inputActivation = it->second;
        deferred_.erase(it);
    }
    // A split sum cannot be activated: its consumer activates what it fetches.
    if (decl.activation != Epilogue::None)
        (spec.splitTexels > 0 ? deferred_[decl.outputs[0]] : spec.activation) = decl.activation;
    MatmulSpec row = spec;
    row.inputFromVertex = true;
    row.splitTexels = tuning_.rowSplitFor(decl.outputs, decl.weight.values->format());
    row.varyingVectors = tuning_.caps.varyingVectors;
    if (decl.norm) {
        linear.norm_.emplace(layerNorm(*decl.x, *decl.norm, spec.x));
        if (linear.norm_->hasMoments()) {
            row.inputLayerNorm = linear.norm_->inputLayerNorm();
            linear.rowReadsMoments_ = !tuning_.rowMomentsInVertex(decl.x->layout().texelsPerRow);
            if (!linear.rowReadsMoments_) row.inputLayerNorm->moments = nullptr;
        } else {
            row.x = spec.x;
        }
    }
    const int parts = int(decl.outputs.size());
    if (canTakeInputFromVertex(row)) linear.row_ = matmulPasses(decl.outputs, row, !tuning_.oneDrawWrites(parts));
    if (decl.oneRowOnly && !linear.row_.empty()) return linear;
    // Over many rows, an activation on fetch would run once per input texel and output texel: a pass
    // activates the chunk's rows once instead.
    if (spec.inputActivation != Epilogue::None) {
        Texture*& activated = activated_[{decl.x->rows(), decl.x->layout().cols}];
        if (!activated) activated = &chunkInput("activated input", decl.x->layout().cols);
        linear.activate_.emplace(activationPass(programs_, *activated, *decl.x, int(spec.inputActivation)));
        spec.x = activated;
        spec.inputActivation = Epilogue::None;
    }
    spec.splitTexels = tuning_.promptSplitFor(decl.outputs);
    linear.rows_ = matmulPasses(decl.outputs, spec, tuning_.passPerOutputFor(parts));
    // Row groups as large as the render targets allow: all outputs in one pass, or a pass per output
    // (the fused Q/K/V) where that fits more rows.
    const int together = tuning_.rowsPerFragmentFor(parts);
    const int rows = std::max(together, tuning_.rowsPerFragmentFor(1));
    if (rows == 1 || decl.oneRowOnly || decl.outputs[0]->layout().interleave % rows != 0) return linear;
    MatmulSpec tiled = spec;
    tiled.rowsPerFragment = rows;
    linear.tiled_ = matmulPasses(decl.outputs, tiled, rows != together);
    linear.tileRows_ = rows;
    linear.tiledReadsPairs_ = readsRowPairs(tiled);
    return linear;
}

std::vector<Pass> LinearPlanner::matmulPasses(const std::vector<Texture*>& outputs, MatmulSpec spec, bool perOutput) {
    std::vector<Pass> passes;
    if (!perOutput) {
        passes.push_back(matmulPass(programs_, outputs, spec));
        return passes;
    }
    for (std::size_t p = 0; p < outputs.size(); ++p) {
        spec.firstPart = int(p);
        passes.push_back(matmulPass(programs_, {outputs[p]}, spec));
    }
    return passes;
}

void LinearPlanner::finish() const {
    for (const auto& [output, activation] : deferred_)
        fail("linear: the activation of ", output->name(), " was left to a consumer, and none reads it");
}

}  // namespace gpt2
