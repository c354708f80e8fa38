#pragma once
// gpt2-pack's work: a Hugging Face checkpoint folder -> one packed model file (docs/weights-format.md),
// and the check of such a file.
#include <string>

#include "format/packed_model.h"

namespace gpt2 {

struct PackSummary {
    ModelConfig config;
    int tensors = 0;
    std::uint64_t payloadBytes = 0;
    std::uint32_t payloadCrc32 = 0;
    bool hasTokenizer = false;
};

// How a packed file stores its weight matrices; LayerNorm parameters and biases are always F32, and
// with Int8 the position embedding is F16 (docs/weights-format.md).
enum class PackedWeights { Fp32, Fp16, Int8 };
// "fp32", "fp16" or "int8"; throws naming the accepted values.
PackedWeights parsePackedWeights(const std::string& name);

// Reads one tensor at a time.
PackSummary packCheckpoint(const std::string& inDir, const std::string& outFile, PackedWeights weights);

// Checks format, version, config, every engine matrix's shape and dtype, the payload checksum and the
// tokenizer; throws a clear Error on the first problem.
PackSummary verifyPacked(const std::string& file);

}  // namespace gpt2
