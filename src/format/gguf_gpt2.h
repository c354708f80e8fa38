#pragma once
// GPT-2 as llama.cpp's converter writes it into a GGUF file (architecture "gpt2"): the config from
// the gpt2.* metadata, and the tensors under llama.cpp's names ("blk.3.attn_qkv.weight"), each a
// Hugging Face tensor. Conv1D weights are stored transposed ([out, in] with the input dimension
// contiguous), so quantization blocks always run along a matrix's input dimension.
#include <cstdint>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "format/model_config.h"

namespace gpt2 {

// Throws naming the file and key unless the header describes a GPT-2 model the engine can run.
ModelConfig ggufGpt2Config(const GgufHeader& header);

// The Hugging Face names (without "transformer.") of every tensor of a GPT-2 model of `config`.
std::vector<std::string> gpt2TensorNames(const ModelConfig& config);
// The Hugging Face name ("h.3.attn.c_attn.weight", without "transformer.") of a GGUF tensor, or ""
// for a tensor GPT-2 does not have.
std::string huggingFaceName(const std::string& ggufName);
// The GGUF name of a Hugging Face tensor, for messages about a missing one.
std::string ggufName(const std::string& huggingFaceName);
// Whether the tensor is a Conv1D weight, which GGUF holds transposed.
bool storedTransposed(const std::string& huggingFaceName);
// The tensor's dimensions in GGUF's order (the contiguous one first) for its Hugging Face shape:
// a Conv1D weight's [in, out] reads the same (it is stored transposed); others are reversed.
std::vector<std::int64_t> ggufDims(const std::string& huggingFaceName, std::vector<std::int64_t> shape);
// A rows x cols row-major matrix as cols x rows: between a Conv1D weight's Hugging Face [in, out]
// and GGUF's [out, in].
std::vector<float> transposed(const std::vector<float>& values, std::int64_t rows, std::int64_t cols);

}  // namespace gpt2
