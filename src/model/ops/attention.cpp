#include "model/ops/attention.h"

#include <string>

#include "model/ops/matmul.h"
#include "model/ops/pointwise.h"
#include "util/error.h"

namespace gpt2 {
namespace {
std::string headDefines(const AttentionShape& shape, int rows) {
    return "#define HEADS " + std::to_string(shape.heads) + "\n#define HEAD_TEXELS " +
           std::to_string(shape.headTexels) + "\n#define ROWS " + std::to_string(rows) + "\n";
}

// The output's column mask (column_mask.glsl), where there is one.
void maskOutput(const Texture* outputMask, std::string& defines, PassInputs& inputs) {
    if (!outputMask) return;
    defines += "#define COLUMN_MASK 1\n";
    inputs.push_back({"u_column_mask", outputMask});
}

Pass attentionPass(ProgramCache& programs, const char* shader, std::string defines, Texture& out, PassInputs inputs,
                   const AttentionShape& shape, int rows = 1, const Texture* outputMask = nullptr) {
    maskOutput(outputMask, defines, inputs);
    Pass pass(programs, shader, headDefines(shape, rows) + defines, {&out}, inputs);
    if (rows > 1) pass.writeRowGroups(rows);
    setAttentionRun(pass, 0, 1, 1);  // a decode step's one query, which its passes keep
    return pass;
}

int roundDown(int n, int multiple) { return n / multiple * multiple; }
int roundUp(int n, int multiple) { return roundDown(n + multiple - 1, multiple); }
}  // namespace

int attentionStride(int count, int rows) { return roundUp(count, rows); }

Pass attentionScoresPass(ProgramCache& programs, Texture& scores, const Texture& q, const Texture& kCache,
                         const AttentionShape& shape, float scale, int rows) {
    const bool pairs = q.format() == TexelFormat::HalfPairs;
    if (pairs && rows < 2)
        fail("attention scores: ", q.name(), " holds fp16 row pairs, which a pass of ", rows,
             " query per fragment cannot read; use 2 or more rows per fragment, or fp32 queries");
    Pass pass = attentionPass(programs, "attention_scores.frag", pairs ? "#define PAIRED_QUERIES\n" : "", scores,
                              {{"u_q", &q}, {"u_k", &kCache}}, shape, rows);
    pass.set("u_scale", scale);
    return pass;
}

Pass runQueriesPass(ProgramCache& programs, Texture& runQueries, const Texture& q) {
    if (runQueries.format() != TexelFormat::HalfPairs)
        fail("attention: ", runQueries.name(), " must hold fp16 row pairs");
    return activationPass(programs, runQueries, q, int(Epilogue::None));
}

Pass attentionRowMaxPass(ProgramCache& programs, Texture& rowMax, const Texture& scores, const AttentionShape& shape) {
    return attentionPass(programs, "attention_row_max.frag", "", rowMax, {{"u_scores", &scores}}, shape);
}

Pass attentionApplyPass(ProgramCache& programs, Texture& out, const Texture& scores, const Texture& vCache,
                        const AttentionShape& shape, int rows, const Texture* rowMax, const Texture* outputMask) {
    PassInputs inputs{{"u_scores", &scores}, {"u_v", &vCache}};
    if (rowMax) inputs.push_back({"u_row_max", rowMax});
    return attentionPass(programs, "attention_apply.frag", rowMax ? "#define ROW_MAX\n" : "", out, inputs, shape, rows,
                         outputMask);
}

Pass attentionProbsPass(ProgramCache& programs, Texture& out, const Texture& scores, const AttentionShape& shape) {
    return attentionPass(programs, "attention_probs.frag", "", out, {{"u_scores", &scores}}, shape);
}

void setAttentionRun(Pass& pass, int pos0, int count, int stride) {
    pass.set("u_pos0", pos0).set("u_count", count).set("u_stride", stride);
}

AttentionOp::AttentionOp(ProgramCache& programs, Texture& out, const Texture& q, const Texture& kCache,
                         const Texture& vCache, const AttentionShape& shape, float scale,
                         const AttentionScratch& scratch, const Texture* outputMask)
    : heads_(shape.heads),
      rows_(scratch.rows),
      stepScores_(attentionScoresPass(programs, *scratch.stepScores, q, kCache, shape, scale)),
      stepApply_(attentionApplyPass(programs, out, *scratch.stepScores, vCache, shape, 1, nullptr, outputMask)),
      runScores_(attentionScoresPass(programs, *scratch.runScores, scratch.runQueries ? *scratch.runQueries : q, kCache,
                                     shape, scale, rows_)),
      runRowMax_(attentionRowMaxPass(programs, *scratch.runRowMax, *scratch.runScores, shape)),
      runApply_(
          attentionApplyPass(programs, out, *scratch.runScores, vCache, shape, rows_, scratch.runRowMax, outputMask)) {
    if (scratch.runQueries) runQueries_.emplace(runQueriesPass(programs, *scratch.runQueries, q));
    const KeyBlocks& keyBlocks = scratch.keyBlocks;
    if (keyBlocks.blockKeys <= 0) return;
    if (keyBlocks.blockKeys % 4 != 0)
        fail("attention: blocks of keys must be whole texels (a multiple of 4), got ", keyBlocks.blockKeys);
    const int blocks = (kCache.rows() + keyBlocks.blockKeys - 1) / keyBlocks.blockKeys;
    if (keyBlocks.partial->rows() < shape.heads * blocks)
        fail("attention: ", keyBlocks.partial->name(), " has ", keyBlocks.partial->rows(), " rows, fewer than ",
             shape.heads, " heads x ", blocks, " blocks");
    blockKeys_ = keyBlocks.blockKeys;
    const std::string block = "#define BLOCK_KEYS " + std::to_string(blockKeys_) + "\n";
    partial_.emplace(Pass(programs, "attention_partial.frag", headDefines(shape, 1) + block,
                          {keyBlocks.partial, keyBlocks.stats}, {{"u_scores", scratch.stepScores}, {"u_v", &vCache}}));
    std::string mergeDefines = headDefines(shape, 1);
    PassInputs mergeInputs{{"u_partial", keyBlocks.partial}, {"u_stats", keyBlocks.stats}};
    maskOutput(outputMask, mergeDefines, mergeInputs);
    merge_.emplace(Pass(programs, "attention_merge.frag", mergeDefines, {&out}, mergeInputs));
}

void AttentionOp::runScores(int pos0, int count) {
    if (count == 1) {
        // A decode step's passes keep the run of one query they were declared with.
        stepScores_.set("u_pos0", pos0).run(0, heads_);
        return;
    }
    if (runQueries_) runQueries_->set("u_in_row_offset", pos0).run(0, count);
    const int stride = attentionStride(count, rows_);
    setAttentionRun(runScores_, pos0, count, stride);
    runScores_.run(0, heads_ * stride);
}

void AttentionOp::run(int pos0, int count) {
    runScores(pos0, count);
    if (count > 1) {
        const int stride = attentionStride(count, rows_);
        setAttentionRun(runRowMax_, pos0, count, stride);
        runRowMax_.run(0, heads_ * stride);
        setAttentionRun(runApply_, pos0, count, stride);
        runApply_.run(roundDown(pos0, rows_), roundUp(pos0 + count, rows_));
    } else if (blockKeys_ > 0 && pos0 + 1 > blockKeys_) {
        const int blocks = (pos0 + blockKeys_) / blockKeys_;
        partial_->set("u_pos0", pos0).set("u_blocks", blocks).run(0, heads_ * blocks);
        merge_->set("u_pos0", pos0).set("u_blocks", blocks).run(pos0, pos0 + 1);
    } else {
        stepApply_.set("u_pos0", pos0).run(pos0, pos0 + 1);
    }
}

AttentionProbsOp::AttentionProbsOp(ProgramCache& programs, Texture& out, const AttentionScratch& scratch,
                                   const AttentionShape& shape)
    : heads_(shape.heads),
      rows_(scratch.rows),
      step_(attentionProbsPass(programs, out, *scratch.stepScores, shape)),
      run_(attentionProbsPass(programs, out, *scratch.runScores, shape)) {}

void AttentionProbsOp::run(int pos0, int count) {
    if (count == 1) {
        step_.set("u_pos0", pos0).run(0, heads_);
        return;
    }
    setAttentionRun(run_, pos0, count, attentionStride(count, rows_));
    run_.run(0, count * heads_);
}

}  // namespace gpt2
