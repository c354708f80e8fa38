#include "model/ops/block_codes.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace gpt2 {
namespace {

// The shader's defines for blocks of `type`.
std::string typeDefines(GgmlType type) {
    const GgmlTypeInfo* info = ggmlTypeInfo(std::uint32_t(type));
    if (!info || !isQuantized(type)) fail("BlockDecoder: ", ggmlTypeName(std::uint32_t(type)), " is not quantized");
    return std::string("#define GGML_") + info->name + " 1\n#define BLOCK_BYTES " + std::to_string(info->blockBytes) +
           "\n";
}

}  // namespace

BlockDecoder::BlockDecoder(ProgramCache& programs, const Texture& staged, Texture& codes, GgmlType type,
                           bool transposed, std::int64_t rowBytes, int outputs)
    : pass_(programs, "codes_from_blocks.frag", typeDefines(type) + (transposed ? "#define TRANSPOSED_WEIGHT 1\n" : ""),
            {&codes}, {{"u_blocks", &staged}}),
      transposed_(transposed),
      codeRows_(codes.rows()) {
    const TexelFormat wanted =
        ggmlTypeInfo(std::uint32_t(type))->codeBits == 4 ? TexelFormat::Int4Quads : TexelFormat::Int8Quads;
    if (codes.format() != wanted || staged.format() != TexelFormat::Bits)
        fail("BlockDecoder: ", codes.name(), " cannot take the codes of ", ggmlTypeName(std::uint32_t(type)),
             " blocks from ", staged.name());
    pass_.set("u_row_bytes", int(rowBytes)).set("u_outputs", outputs);
}

void BlockDecoder::run(int first, int end) {
    pass_.set("u_first_output", first).set("u_end_output", end);
    // Outputs are rows of a transposed matrix; otherwise they are texels of every row.
    if (transposed_)
        pass_.run(first, std::min(end, codeRows_));
    else
        pass_.run(0, codeRows_);
}

}  // namespace gpt2
