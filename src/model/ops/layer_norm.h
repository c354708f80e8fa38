#pragma once
// LayerNorm over the first `cols` columns of rows of x (shaders/layer_norm.frag, and
// shaders/layer_norm_moments.frag when the row statistics get a pass of their own).
#include <optional>

#include "gl/pass.h"

namespace gpt2 {

// Output row r of a pass that reads x at rows r + offset (LayerNorm and matmul passes).
void setInputRowOffset(Pass& pass, int offset);

// A LayerNorm that a matmul applies to its input (MatmulSpec::inputLayerNorm): x's row moments from
// LayerNormOp::runMoments, gamma and beta.
struct InputLayerNorm {
    const Texture* moments = nullptr;
    const Texture* gamma = nullptr;
    const Texture* beta = nullptr;
    int cols = 0;
    float eps = 0;
};

// out row r = LN(x row r + inputRowOffset) * gamma + beta. With `moments` (one texel per row, rows as
// x's and of whole lines, float blending) and splitTexels > 0, two passes: each row's moments summed
// once in blended instances of splitTexels input texels, then the normalisation; a one-row matmul can
// then normalise its input itself from the moments (InputLayerNorm) and skip the normalisation pass
// (runMoments). Otherwise one pass whose fragments each compute their row's statistics. Which one
// runs faster depends on the renderer (Tuning decides; docs/architecture.md, "What the tuning decides, and why").
class LayerNormOp {
public:
    LayerNormOp(ProgramCache& programs, Texture& out, const Texture& x, const Texture& gamma, const Texture& beta,
                int cols, float eps, Texture* moments = nullptr, int splitTexels = 0);
    // Output rows [rowBegin, rowEnd), from input rows [rowBegin, rowEnd) + inputRowOffset.
    void run(int rowBegin, int rowEnd, int inputRowOffset);
    // Only the moments of x rows [rowBegin, rowEnd) (hasMoments()), for a matmul's InputLayerNorm.
    void runMoments(int rowBegin, int rowEnd);
    bool hasMoments() const { return moments_.has_value(); }
    // What a matmul needs to normalise x's rows itself after runMoments (hasMoments()).
    const Texture& input() const { return x_; }
    const InputLayerNorm& inputLayerNorm() const { return folded_; }

private:
    const Texture& x_;
    InputLayerNorm folded_;
    std::optional<Pass> moments_;
    Pass normalize_;
};

}  // namespace gpt2
