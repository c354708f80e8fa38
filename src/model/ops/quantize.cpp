#include "model/ops/quantize.h"

#include <string>

#include "gl/pass.h"
#include "util/error.h"

namespace gpt2 {

void quantizeToBlocks(ProgramCache& programs, const Texture& floats, const BlockTargets& out, bool transposed) {
    if (out.codes.format() != TexelFormat::Int4Quads || out.blockTexels <= 0)
        fail("quantizeToBlocks: ", out.codes.name(), " needs 4-bit codes and a block size");
    std::string defines = "#define BLOCK_TEXELS " + std::to_string(out.blockTexels) + "\n";
    if (transposed) defines += "#define TRANSPOSED_WEIGHT 1\n";
    Pass params(programs, "quantize_block_params.frag", defines, {&out.scales, &out.offsets}, {{"u_w", &floats}});
    Pass codes(programs, "quantize_block_codes.frag", defines, {&out.codes},
               {{"u_w", &floats}, {"u_w_scale", &out.scales}, {"u_w_offset", &out.offsets}});
    params.run(0, out.scales.rows());
    codes.run(0, out.codes.rows());
}

}  // namespace gpt2
