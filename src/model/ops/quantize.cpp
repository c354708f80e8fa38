#include "model/ops/quantize.h"

#include <string>

#include "gl/pass.h"
#include "util/error.h"

namespace gpt2 {

void quantizeToBlocks(ProgramCache& programs, const Texture& floats, const BlockTargets& out, bool transposed) {
    const bool int8 = out.codes.format() == TexelFormat::Int8Quads;
    if ((!int8 && out.codes.format() != TexelFormat::Int4Quads) || out.blockTexels <= 0 || (!int8 && !out.offsets))
        fail("quantizeToBlocks: ", out.codes.name(),
             " needs int8 codes, or 4-bit codes with offsets, and a block size");
    std::string defines = "#define BLOCK_TEXELS " + std::to_string(out.blockTexels) + "\n";
    if (transposed) defines += "#define TRANSPOSED_WEIGHT 1\n";
    if (int8) defines += "#define SYMMETRIC 1\n";
    std::vector<Texture*> params = {&out.scales};
    PassInputs codeInputs = {{"u_w", &floats}, {"u_w_scale", &out.scales}};
    if (!int8) {
        params.push_back(out.offsets);
        codeInputs.push_back({"u_w_offset", out.offsets});
    }
    Pass paramsPass(programs, "quantize_block_params.frag", defines, params, {{"u_w", &floats}});
    Pass codes(programs, "quantize_block_codes.frag", defines, {&out.codes}, codeInputs);
    paramsPass.run(0, out.scales.rows());
    codes.run(0, out.codes.rows());
}

}  // namespace gpt2
