#pragma once
// The packed model file (docs/weights-format.md): one safetensors container whose tensors are the
// engine's matrices already padded to whole texels (so their bytes are the texel stream a texture
// upload takes, on any MAX_TEXTURE_SIZE), with the config, the tokenizer, the format version and a
// CRC-32 of the payload in __metadata__.
#include <cstdint>
#include <string>

#include "format/model_config.h"
#include "format/safetensors.h"

namespace gpt2 {

constexpr const char* kPackedFormatName = "gpt2-webgl-packed";
// Version 1 holds F16 or F32 matrices; version 2 adds int8 matrices (I8, each after its F32 scales).
// A file is written with the lowest version that can hold it, so fp16 and fp32 files stay readable by
// engines that know only version 1.
constexpr int kPackedFormatFirstVersion = 1;
constexpr int kPackedFormatInt8Version = 2;

struct PackedMetadata {
    int version = kPackedFormatFirstVersion;
    ModelConfig config;
    std::string configJson;
    std::string vocabJson;  // empty: no tokenizer
    std::string mergesText;
    std::uint32_t payloadCrc32 = 0;
    std::uint64_t payloadBytes = 0;
};

bool isPackedModel(const SafetensorsHeader& header);
// Checks the format name and version and parses the config; throws naming `header.label`.
PackedMetadata parsePackedMetadata(const SafetensorsHeader& header);

}  // namespace gpt2
