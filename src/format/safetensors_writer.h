#pragma once
// Writes a safetensors file (F32, F16 or I8 tensors), streaming: tensors are produced one at a time.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "format/safetensors.h"

namespace gpt2 {

struct TensorToWrite {
    std::string name;
    DType dtype = DType::F32;  // F32, F16 or I8
    std::vector<std::int64_t> shape;
};

// `produce(i)` returns the values of tensors[i] when it is written as floats (for I8: integers in
// [-128, 127], anything else is refused).
void writeSafetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                      const std::function<std::vector<float>(std::size_t)>& produce,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace gpt2
