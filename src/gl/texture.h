#pragma once
// A matrix in GPU memory: a 2D array texture in the layout of TensorLayout, RGBA32F, RGBA16F, or
// fp16 as row pairs in RGBA32UI.
#include <cstdint>
#include <string>
#include <vector>

#include "gl/framebuffer.h"
#include "gl/gl_objects.h"
#include "gl/tensor_layout.h"

namespace gpt2 {

// HalfPairs: fp16 values, two rows per texel. The texture holds ceil(rows / 2) lines of RGBA32UI
// texels (its layout() is that of the pairs): texel (p, t) is texel t of row 2p then of row 2p + 1,
// four halves each, two halves per channel (unpackHalf2x16). A matmul then fetches four rows of
// weights in two texels instead of four (shaders/fetch.glsl, fetchFourRows): fewer fetches for
// the same bytes, which were the limit of fragment-shader matmuls with RGBA16F (docs/architecture.md, "What
// the tuning decides, and why").
// Int8Quads: int8 values, four rows per texel, for weights quantized with a scale per output
// channel (kept beside the texture by its owner, model/model_weights.h). The texture holds
// ceil(rows / 4) lines of RGBA32I texels: channel c of texel (q, t) is texel t of row 4q + c, its four
// values one signed byte each, so a matmul fetches a 4 x 4 block of weights in one texel
// (shaders/fetch.glsl).
// Int4Quads: 4-bit codes 0..15, four rows per texel, for block-quantized weights (their scales and
// offsets kept beside the texture by its owner). The texture holds ceil(rows / 4) lines of RG32UI
// texels: .x of texel (q, t) holds texel t of row 4q in its low 16 bits and of row 4q + 1 in its high
// ones, .y rows 4q + 2 and 4q + 3, four codes a row, the first in the lowest bits: one fetch per
// 4 x 4 block of weights, in half the bytes of Int8Quads (shaders/fetch.glsl, fetchNibbleRows).
// Bits: raw bits, one row per line of RG32UI texels, eight bytes a texel, the first in the lowest
// bits: how a file's bytes reach the GPU as they are, read with integer fetches only. fp16 weights
// are staged so (four halves a texel; sampling fp16 may flush subnormals) before the GPU pairs or
// transposes them, and GGUF blocks before the GPU decodes them.
enum class TexelFormat { Float32, Float16, HalfPairs, Int8Quads, Int4Quads, Bits };

// What GL and the shaders see of a format: one row of this table per format.
struct TexelFormatInfo {
    GLenum internalFormat;  // of the storage
    GLenum uploadFormat, uploadType;
    int texelBytes;
    int rowsPerTexel;     // rows of the matrix in one stored line (row pairs, quads)
    const char* sampler;  // the GLSL sampler type a Pass declares for it
};
const TexelFormatInfo& formatInfo(TexelFormat format);
inline int rowsPerTexel(TexelFormat format) { return formatInfo(format).rowsPerTexel; }

// Bytes of texture storage currently allocated by all live Textures.
std::int64_t liveTextureBytes();

class Texture {
public:
    // When the storage is allocated: at once, or by allocate() (a model counts the bytes of all its
    // textures, and may refuse them, before allocating any). Staging: at once, with its GL errors
    // (GL_OUT_OF_MEMORY) left to its owner's next checkGlError: a load stages weight matrices one by
    // one, and in a browser each check waits for the GPU process to catch up.
    enum class Allocation { Now, Later, Staging };
    Texture(const TensorLayout& layout, TexelFormat format, std::string name, Allocation when = Allocation::Now);
    ~Texture();
    Texture(const Texture&) = delete;
    Texture& operator=(const Texture&) = delete;

    // The layout of what is stored: for HalfPairs, of the row pairs.
    const TensorLayout& layout() const { return layout_; }
    // Rows of the matrix it holds (HalfPairs, Int8Quads: twice, four times the stored lines).
    int rows() const { return rowsPerTexel(format_) * layout_.rows; }
    TexelFormat format() const { return format_; }
    const std::string& name() const { return name_; }
    GLuint id() const { return texture_.get(); }
    // Bytes of its storage, allocated or not.
    std::int64_t bytes() const;
    // Allocates the storage of a texture made with Allocation::Later, cleared to zero; once.
    void allocate();
    // The same for many textures, checked for GL errors (GL_OUT_OF_MEMORY) every 64 MB and at the end,
    // naming `what`.
    static void allocateAll(const std::vector<Texture*>& textures, const std::string& what);
    bool allocated() const { return texture_.get() != 0; }

    // Writes rows [row0, row0 + rowCount) from `values` (rowCount x cols floats, row-major);
    // padding columns become 0. Float16 and HalfPairs textures store the values rounded to half
    // (HalfPairs: row0 even, and rowCount even unless the rows run to the end).
    void uploadRows(int row0, int rowCount, const float* values);
    // Writes rows [0, rowCount) from their texel stream: rowCount x (texelsPerRow * 4) values, F32
    // (`half` false) or F16 bit patterns, converted when the texture's format differs. The rows from
    // rowCount to rows() are zeros.
    void uploadTexelStream(const void* values, int rowCount, bool half);
    // Writes every row of an Int8Quads texture from rows() x (texelsPerRow * 4) int8 values, or of an
    // Int4Quads texture from as many codes 0..15, row-major.
    void uploadCodes(const std::int8_t* values);
    // Writes a Bits texture's texels, row after row, from `count` bytes (eight a texel, the first
    // in the lowest bits), then zeros to the end of the last row written; the rows after it keep their
    // contents; `bytes` 4-byte aligned. How a GGUF tensor's blocks go to the GPU as they are
    // (model/ops/block_codes.h).
    void uploadBytes(const std::uint8_t* bytes, std::int64_t count);
    // Reads rows back as rowCount x cols floats, waiting for the GPU. Needs a Float32 texture (a
    // render target). AsyncRead reads without waiting.
    std::vector<float> readRows(int row0, int rowCount);
    // The first `texels` texels of rows [row0, row0 + rowCount), as rowCount x (texels * 4) floats
    // (rows not interleaved), waiting for the GPU: what a reader needs of wide rows it fills from the left.
    std::vector<float> readRowStarts(int row0, int rowCount, int texels);
    // Issues the reads of readRowStarts to `destination`, or to offsets from 0 in the bound
    // PIXEL_PACK_BUFFER when that is null.
    void packRowStarts(int row0, int rowCount, int texels, float* destination);
    // Issues the reads of rows [row0, row0 + rowCount) as texelsPerRow * 4 floats each, to
    // `destination`, or to offsets from 0 in the bound PIXEL_PACK_BUFFER when that is null.
    void packRows(int row0, int rowCount, float* destination);
    // rowCount x cols floats of rows read as texels (the padding columns dropped).
    std::vector<float> unpadRows(const std::vector<float>& texels, int rowCount) const;

    // The framebuffer that renders into one page; made on first use and kept.
    const Framebuffer& framebuffer(int page);

private:
    // The storage, unchecked.
    void allocateStorage();
    // Every texel starts at zero, written by the GPU: WebGL would otherwise clear the texture lazily
    // before its first partial upload or read (and Firefox warns that this may be slow).
    static void clearToZero(const std::vector<Texture*>& textures);
    // Clears each page through the bound draw framebuffer.
    void clearPages();
    // Writes rows [row0, row0 + rowCount) of the stored layout (row pairs, quads) from their texels.
    // Not checked here: an upload's owner checks for GL errors once its uploads are issued
    // (ModelWeights::checkComplete), and a read checks before it returns.
    void writeTexels(int row0, int rowCount, const void* data);
    // Uploads rows [row0, row0 + rowCount) of a Float16 or HalfPairs texture, arranged for its format
    // in one buffer: halfAt(r, c) is the fp16 bit pattern of column c < texelsPerRow * 4 of row r.
    template <typename HalfAt>
    void writeHalfRows(int row0, int rowCount, HalfAt halfAt);

    TensorLayout layout_;
    TexelFormat format_;
    std::string name_;
    GlObject texture_;
    std::vector<Framebuffer> framebuffers_;
};

}  // namespace gpt2
