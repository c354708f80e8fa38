#include "format/packed_model.h"

#include <cstdlib>

#include "util/error.h"

namespace gpt2 {
namespace {

const std::string& required(const SafetensorsHeader& header, const char* key) {
    auto it = header.metadata.find(key);
    if (it == header.metadata.end())
        fail(header.label, ": packed model metadata lacks \"", key, "\"; re-create it with gpt2-pack");
    return it->second;
}

std::uint64_t parseUnsigned(const SafetensorsHeader& header, const char* key) {
    const std::string& text = required(header, key);
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0')
        fail(header.label, ": metadata \"", key, "\" must be a decimal number, got \"", text, "\"");
    return value;
}

}  // namespace

bool isPackedModel(const SafetensorsHeader& header) {
    auto it = header.metadata.find("format");
    return it != header.metadata.end() && it->second == kPackedFormatName;
}

PackedMetadata parsePackedMetadata(const SafetensorsHeader& header) {
    if (!isPackedModel(header))
        fail(header.label, ": not a packed gpt2-webgl model (metadata format is not \"", kPackedFormatName, "\")");
    const std::uint64_t version = parseUnsigned(header, "format_version");
    if (version < std::uint64_t(kPackedFormatFirstVersion) || version > std::uint64_t(kPackedFormatInt8Version))
        fail(header.label, ": packed format version ", version, " is not supported (this engine reads versions ",
             kPackedFormatFirstVersion, " to ", kPackedFormatInt8Version,
             "); re-pack the model with this version's gpt2-pack");
    PackedMetadata m;
    m.version = int(version);
    for (const auto& [name, info] : header.tensors)
        if (info.dtype == DType::I8 && m.version < kPackedFormatInt8Version)
            fail(header.label, ": tensor ", name, " is I8, which packed format version ", m.version,
                 " does not allow (int8 needs version ", kPackedFormatInt8Version, ")");
    m.configJson = required(header, "config");
    m.config = parseModelConfig(m.configJson, header.label + " (config)");
    if (header.metadata.count("vocab")) {
        m.vocabJson = required(header, "vocab");
        m.mergesText = required(header, "merges");
    }
    m.payloadCrc32 = std::uint32_t(parseUnsigned(header, "payload_crc32"));
    m.payloadBytes = parseUnsigned(header, "payload_bytes");
    return m;
}

}  // namespace gpt2
