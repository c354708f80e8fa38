#pragma once
// A Hugging Face GPT-2 checkpoint folder: config.json plus model.safetensors, or shards listed in
// model.safetensors.index.json. Tensors are looked up by their GPT-2 names with or without the
// "transformer." prefix (the official files omit it, save_pretrained writes it).
#include <memory>
#include <string>
#include <vector>

#include "format/model_config.h"
#include "format/safetensors.h"

namespace gpt2 {

// Where the tensors come from; the model layer reads weights through this and nothing else.
class TensorSource {
public:
    virtual ~TensorSource() = default;
    virtual const ModelConfig& config() const = 0;
    virtual bool has(const std::string& name) const = 0;
    // The tensor as floats, after checking its shape. `name` omits the "transformer." prefix.
    virtual std::vector<float> read(const std::string& name, const std::vector<std::int64_t>& expectedShape) const = 0;
};

// A checkpoint folder's config.json.
ModelConfig checkpointConfig(const std::string& dir);
// A checkpoint folder's safetensors files: model.safetensors, or the shards that
// model.safetensors.index.json lists.
std::vector<std::string> checkpointWeightFiles(const std::string& dir);

class HuggingFaceCheckpoint : public TensorSource {
public:
    explicit HuggingFaceCheckpoint(const std::string& dir);
    const ModelConfig& config() const override { return config_; }
    bool has(const std::string& name) const override;
    std::vector<float> read(const std::string& name, const std::vector<std::int64_t>& expectedShape) const override;
    // The tensor's bytes as the file stores them (F32, F16 or BF16), after checking its shape.
    struct Stored {
        DType dtype;
        std::vector<std::uint8_t> bytes;
    };
    Stored readStored(const std::string& name, const std::vector<std::int64_t>& expectedShape) const;

private:
    struct Located {
        const SafetensorsFile* file;
        const TensorInfo* info;
    };
    bool locate(const std::string& name, Located& out) const;
    // The float tensor `name`, after checking its shape and dtype.
    Located locateFloats(const std::string& name, const std::vector<std::int64_t>& expectedShape) const;

    std::string dir_;
    ModelConfig config_;
    std::vector<std::unique_ptr<SafetensorsFile>> files_;
};

}  // namespace gpt2
