#pragma once
// The model's weights as textures, uploaded tensor by tensor (one tensor in CPU memory at a time).
#include <map>
#include <memory>
#include <string>

#include "gl/texture.h"
#include "model/weight_packing.h"

namespace gpt2 {

class ModelWeights {
public:
    ModelWeights(const TensorSource& source, TexelFormat format, const TextureLimits& limits);
    const Texture& operator[](const std::string& name) const;
    std::int64_t bytes() const;

private:
    std::map<std::string, std::unique_ptr<Texture>> textures_;
};

}  // namespace gpt2
