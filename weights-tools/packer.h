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

// `half`: weight matrices as F16 (LayerNorm parameters and biases stay F32). Reads one tensor at a time.
PackSummary packCheckpoint(const std::string& inDir, const std::string& outFile, bool half);

// Checks format, version, config, every engine matrix's shape and dtype, the payload checksum and the
// tokenizer; throws a clear Error on the first problem.
PackSummary verifyPacked(const std::string& file);

}  // namespace gpt2
