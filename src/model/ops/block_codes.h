#pragma once
// Decoding a GGUF tensor's quantized blocks on the GPU as it loads (shaders/codes_from_blocks.frag):
// the file's bytes go to a texture as they are, and a pass writes their codes into the layout the
// matmuls read, Int4Quads for the 4-bit types and Int8Quads for the others. The CPU decodes only the
// scales and offsets (format/ggml_type.h), one per 16 or 32 values.
#include "format/ggml_type.h"
#include "gl/pass.h"

namespace gpt2 {

class BlockDecoder {
public:
    // `codes` gets the matrix of `outputs` tensor rows of `rowBytes` bytes each (blocks of `type`
    // along each row); `transposed` where the engine's rows are the tensor's rows (wte), not its
    // inputs. `staged` is a Bits texel stream (Texture::uploadBytes) that run() reads.
    BlockDecoder(ProgramCache& programs, const Texture& staged, Texture& codes, GgmlType type, bool transposed,
                 std::int64_t rowBytes, int outputs);
    // Writes the codes of output channels [first, end) (multiples of 4; past `outputs`, padding that
    // gets codes 0) from tensor rows first onwards, which `staged` now holds from its first byte.
    void run(int first, int end);

private:
    Pass pass_;
    bool transposed_;
    int codeRows_;
};

}  // namespace gpt2
