#pragma once
// The model's weights as textures. All textures are allocated up front (at once, or by allocate() once
// a model has counted its bytes); tensors then arrive one at a time in any order (a file read tensor by tensor, or a
// download streamed in file order) and are packed and uploaded as they come, so no more than one tensor is ever held in
// CPU memory.
#include <map>
#include <memory>
#include <string>

#include "format/safetensors.h"
#include "gl/pass.h"
#include "gl/program.h"
#include "gl/texture.h"
#include "model/ops/matmul.h"
#include "format/model_config.h"
#include "model/block_matrix.h"
#include "model/int8_quantization.h"

namespace gpt2 {

// A matrix kept as affine blocks (a quantized GGUF tensor, format/ggml_type.h): 4- or 8-bit codes and a
// scale, and an offset where the format has them, per block of `blockRows` inputs.
struct BlockFormat {
    int codeBits = 8;
    int blockRows = 32;
    bool offsets = false;
    bool halfParams = false;  // the scales and offsets are fp16 values, kept in fp16 textures
};
// By Hugging Face name without "transformer.": the matrices that arrive as blocks.
using BlockFormats = std::map<std::string, BlockFormat>;

class ModelWeights {
public:
    // Matrices named in `blocks` are kept as blocks whatever `format` says. With Int4Quads (weights
    // 'int4') every matrix but wpe becomes 4-bit blocks, quantized on the GPU as it arrives (which
    // needs useGpuPasses first).
    ModelWeights(const ModelConfig& config, TexelFormat format, const TextureLimits& limits,
                 Texture::Allocation when = Texture::Allocation::Now, const BlockFormats& blocks = {});
    // The programs of the passes that quantize or convert matrices on the GPU as they arrive.
    void useGpuPasses(ProgramCache& programs) { programs_ = &programs; }
    // Allocates the textures of weights made with Allocation::Later.
    void allocate();

    const ModelConfig& config() const { return config_; }
    // True when `name` (a Hugging Face tensor name, "transformer." optional) is a weight the engine uses.
    bool wants(const std::string& name) const;
    // The engine matrix of the weight `name`.
    const MatrixSpec& spec(const std::string& name) const { return slot(name).spec; }
    // Whether the weight `name` was declared to arrive in blocks (the constructor's BlockFormats).
    bool arrivesInBlocks(const std::string& name) const;
    // The same from the tensor's bytes as stored (F32, F16 or BF16). Where packing keeps every value in
    // place (packedInPlace) and the texture holds floats (no quantization), F32 and F16 bytes go to
    // the GPU as they are: no copy as floats, no packing; fp16 row pairs are made there
    // (shaders/half_pairs_from_stream.frag, which needs useGpuPasses first).
    // `transposed`: the bytes hold the tensor transposed, [shape[1], shape[0]] (GGUF's Conv1D weights,
    // a row per output channel); the GPU transposes it (shaders/rows_from_stored_columns.frag).
    void upload(const std::string& name, const std::vector<std::int64_t>& shape, DType dtype, const std::uint8_t* bytes,
                bool transposed = false);
    // Uploads a matrix declared in the constructor's BlockFormats, in the engine's layout.
    void uploadBlocks(const std::string& name, const BlockMatrix& matrix);
    // Throws naming the weights that never arrived, or the GL error their uploads raised.
    void checkComplete(const std::string& label) const;

    const Texture& operator[](const std::string& name) const;
    // The matrix with its scales and offsets, as the matmuls read it.
    WeightMatrix matrix(const std::string& name) const;
    // Bytes of every weight texture, allocated or not.
    std::int64_t bytes() const;

private:
    struct Slot {
        MatrixSpec spec;
        std::unique_ptr<Texture> texture;
        std::unique_ptr<Texture> scales;   // int8 matrices: [1, channels]; blocks: [K / block, channels]
        std::unique_ptr<Texture> offsets;  // blocks whose format has offsets
        int blockRows = 0;                 // blocks only
        bool quantizedHere = false;        // blocks that arrive as floats (weights 'int4')
        bool uploaded = false;
    };
    // Packs and uploads a Hugging Face tensor; `values` has the tensor's Hugging Face shape.
    void upload(const std::string& name, const std::vector<std::int64_t>& shape, const std::vector<float>& values);
    Slot& slot(const std::string& name);
    const Slot& slot(const std::string& name) const;
    // Whether the slot's codes are made on the GPU from floats (weights 'int8' and 'int4').
    static bool quantizedOnGpu(const Slot& s);
    // A texture to stage the slot's matrix in (`cols` wide; its values fp16 ones, or not) before it is
    // quantized on the GPU.
    Texture stagingFor(const Slot& s, int cols, bool halfValues) const;
    // Quantizes the staged matrix into the slot's codes, scales and offsets.
    void quantizeStaged(Slot& s, const Texture& staging);
    // Uploads `rows` rows of the matrix as a texel stream (`cols` values a row, fp16 or fp32): quantized
    // or paired on the GPU where the slot's format says so, as they are otherwise.
    void uploadStream(Slot& s, const std::uint8_t* bytes, int rows, int cols, bool half);
    // Makes the slot's fp16 row pairs on the GPU from `rows` rows of `cols` fp16 or fp32 values (their
    // texel stream).
    void pairsOnGpu(Slot& s, const std::uint8_t* bytes, int rows, int cols, bool half);
    // The pass that writes the slot's fp16 row pairs from `staging`, rows u_first_row onwards.
    Pass pairsPass(Slot& s, const Texture& staging) const;
    // Uploads a matrix stored transposed (`inputs` values for each of its output channels), fp16 or
    // fp32, transposed on the GPU into the slot's format.
    void uploadTransposed(Slot& s, const std::uint8_t* bytes, int inputs, bool half);
    // Uploads an engine matrix (rows x cols floats) into the slot's format.
    void uploadMatrix(Slot& s, const std::vector<float>& matrix, int cols);
    // Writes the codes of a matrix that arrived in blocks, decoded on the GPU from its bytes.
    void decodeOnGpu(Slot& s, const BlockMatrix& m);

    ModelConfig config_;
    TextureLimits limits_;
    ProgramCache* programs_ = nullptr;
    std::map<std::string, Slot> slots_;
    std::unique_ptr<Texture> blockBytes_;  // the bytes of blocks on their way to decodeOnGpu, while some are due
};

}  // namespace gpt2
