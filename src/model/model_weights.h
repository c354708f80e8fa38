#pragma once
// The model's weights as textures. All textures are allocated up front (at once, or by allocate() once
// a model has counted its bytes); tensors then arrive one at a time in any order (a file read tensor by tensor, or a
// download streamed in file order) and are packed and uploaded as they come, so no more than one tensor is ever held in
// CPU memory.
#include <map>
#include <memory>
#include <string>

#include "format/safetensors.h"
#include "gl/texture.h"
#include "model/weight_packing.h"

namespace gpt2 {

class ModelWeights {
public:
    ModelWeights(const ModelConfig& config, TexelFormat format, const TextureLimits& limits,
                 Texture::Allocation when = Texture::Allocation::Now);
    // Allocates the textures of weights made with Allocation::Later.
    void allocate();

    // True when `name` (a Hugging Face tensor name, "transformer." optional) is a weight the engine uses.
    bool wants(const std::string& name) const;
    // Packs and uploads a Hugging Face tensor; `values` has the tensor's Hugging Face shape.
    void upload(const std::string& name, const std::vector<std::int64_t>& shape, const std::vector<float>& values);
    // Uploads a tensor of a packed file (docs/weights-format.md): an engine matrix as F32, F16 or I8,
    // or the scales of an I8 matrix, which come just before it.
    void uploadPacked(const TensorInfo& info, const std::uint8_t* bytes, const std::string& label);
    // Uploads every weight from `source`.
    void uploadAll(const TensorSource& source);
    // Throws naming the weights that never arrived.
    void checkComplete(const std::string& label) const;

    const Texture& operator[](const std::string& name) const;
    // The scale of each output channel of an int8 matrix ([1, channels]); null for other formats.
    const Texture* scales(const std::string& name) const;
    // Bytes of every weight texture, allocated or not.
    std::int64_t bytes() const;

private:
    struct Slot {
        MatrixSpec spec;
        std::unique_ptr<Texture> texture;
        std::unique_ptr<Texture> scales;  // int8 matrices only
        bool uploaded = false;
        std::vector<float> pendingScales;  // a packed I8 matrix's scales, until the matrix arrives
    };
    Slot& slot(const std::string& name);
    // Uploads an engine matrix (rows x cols floats) into the slot's format.
    void uploadMatrix(Slot& s, const std::vector<float>& matrix, int cols);
    void keepScales(Slot& s, const TensorInfo& info, const std::uint8_t* bytes, const std::string& label);
    // An I8 matrix of a packed file: uploaded as is into int8 textures, dequantized into others.
    void uploadPackedInt8(Slot& s, const std::int8_t* values, int paddedCols, const std::string& label);

    ModelConfig config_;
    std::map<std::string, Slot> slots_;
};

}  // namespace gpt2
