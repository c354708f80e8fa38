#include "model/ops/layer_norm.h"

#include <string>

#include "model/ops/matmul.h"
#include "util/error.h"

namespace gpt2 {

void setInputRowOffset(Pass& pass, int offset) { pass.set("u_in_row_offset", offset); }

namespace {
std::optional<Pass> momentsPass(ProgramCache& programs, Texture* moments, const Texture& x, int cols, int splitTexels) {
    if (!moments || splitTexels <= 0) return std::nullopt;
    if (moments->layout().texelsPerRow != 1)
        fail("layer norm: the moments texture ", moments->name(), " must hold one texel per row");
    const int inTexels = x.layout().texelsPerRow;
    const int texels = splitInstanceTexels(inTexels, splitTexels);
    if (moments->rows() < x.rows())
        fail("layer norm: the moments texture ", moments->name(), " has ", moments->rows(), " rows, fewer than ",
             x.name());
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

}  // namespace gpt2
