#pragma once
// A linear layer as the graph declares it, out = residual + act(LN(x) @ W + b), and the passes the
// tuning makes of it. The graph names the math (LinearDecl); LinearPlanner decides how it runs:
// split-K, a one-row variant for decode steps, a row-tiled variant for the whole row groups of a
// prompt chunk, the LayerNorm in a pass of its own or folded into the one-row matmul from row
// moments, and whether the activation is applied to the sums or by the consumer (on fetch in a
// decode step, in a pass of its own over a prompt chunk).
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/activations.h"
#include "model/ops/layer_norm.h"
#include "model/ops/matmul.h"
#include "model/tuning.h"

namespace gpt2 {

struct LayerNormWeights {
    const Texture* gamma = nullptr;
    const Texture* beta = nullptr;
};

struct LinearDecl {
    std::vector<Texture*> outputs;  // one, or three that split W's columns in equal parts (Q, K, V)
    const Texture* x = nullptr;
    std::optional<LayerNormWeights> norm = {};  // LN of x's rows first
    WeightMatrix weight;                        // [K, N] ([N, K] with transposedWeight)
    const Texture* bias = nullptr;
    const Texture* residual = nullptr;    // rows as the output
    const Texture* addend = nullptr;      // [1, N] after the bias (MatmulSpec::addend)
    const Texture* columnMask = nullptr;  // [1, N] of 1 or 0 (MatmulSpec::columnMask)
    Epilogue activation = Epilogue::None;
    bool transposedWeight = false;
    bool oneRowOnly = false;  // only ever run for one row (lm_head)
};

class Linear {
public:
    // Output rows [outRow, outRow + count) from input rows [inRow, inRow + count).
    void run(int outRow, int inRow, int count);
    void run(int row, int count) { run(row, row, count); }

private:
    friend class LinearPlanner;
    // The many-row passes over output rows [begin, end): tiled_ over the whole row groups, rows_ over
    // the rest.
    void runRows(int begin, int end);

    std::optional<LayerNormOp> norm_;
    std::optional<Pass> activate_;  // the input's activation, into a chunk's rows, before rows_ and tiled_
    // The many-row passes (prefill chunks; decode steps too where there is no row_), each one pass or
    // one per output: rows_ over any rows, tiled_ over whole groups of tileRows_ rows.
    std::vector<Pass> rows_;
    std::vector<Pass> tiled_;
    std::vector<Pass> row_;         // one row (decode steps), where split: one pass, or one per output
    bool rowReadsMoments_ = false;  // row_ normalises x from the moments pass (else it sums them itself)
    int tileRows_ = 1;
    bool tiledReadsPairs_ = false;  // tiled_ fetch two input rows at a time (readsRowPairs)
};

class LinearPlanner {
public:
    LinearPlanner(ProgramCache& programs, const Tuning& tuning, Activations& activations, float layerNormEps);
    Linear linear(const LinearDecl& decl);
    // Throws if an activation left to a consumer found none (call once the graph is declared).
    void finish() const;

private:
    // The passes of a matmul into `outputs`: one, or one per output.
    std::vector<Pass> matmulPasses(const std::vector<Texture*>& outputs, MatmulSpec spec, bool perOutput);
    // A chunk's rows of a matmul input that a LayerNorm or activation pass writes, as the tuning
    // stores them (fp32, or fp16 row pairs).
    Texture& chunkInput(const std::string& name, int cols);
    // The LayerNorm of x's rows into `output`, a chunk's rows.
    LayerNormOp layerNorm(const Texture& x, const LayerNormWeights& weights, const Texture*& output);

    ProgramCache& programs_;
    const Tuning& tuning_;
    Activations& activations_;
    float eps_;
    // LayerNorm and activation outputs (one chunk's rows, read by the next matmul only) and row
    // moments (rows as x's), by x's (rows, cols), shared by every LayerNorm or activation of such an x.
    std::map<std::pair<int, int>, Texture*> normed_, activated_, moments_;
    std::map<const Texture*, Epilogue> deferred_;  // outputs whose activation their consumer applies
};

}  // namespace gpt2
