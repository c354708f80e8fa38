// Arbitrary text as the JSON header of a packed model file (docs/weights-format.md). The harness
// prepends the 8-byte length itself, so mutations exercise the metadata rather than mostly breaking
// the length prefix (fuzz_safetensors covers that). Header parse, then parsePackedMetadata when
// isPackedModel; a packed tokenizer that the metadata carries is built too, as the loader does.
#include <algorithm>
#include <string>
#include <vector>

#include "format/packed_model.h"
#include "fuzz_common.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

GPT2_FUZZ_ENTRY(packed)(const std::uint8_t* data, std::size_t size) {
    std::vector<std::uint8_t> file(8 + size);
    for (int i = 0; i < 8; ++i) file[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(size) >> (8 * i));
    std::copy(data, data + size, file.begin() + 8);

    gpt2::SafetensorsHeader header;
    try {
        header = gpt2::parseSafetensorsHeader(file.data(), file.size(), file.size(), "fuzz.gpt2");
    } catch (const gpt2::Error&) {
        return 0;
    }
    if (!gpt2::isPackedModel(header)) return 0;
    gpt2::PackedMetadata meta;
    try {
        meta = gpt2::parsePackedMetadata(header);
    } catch (const gpt2::Error&) {
        return 0;
    }
    GPT2_FUZZ_CHECK(meta.config.embedDim > 0 && meta.config.heads > 0 && meta.config.embedDim % meta.config.heads == 0);
    GPT2_FUZZ_CHECK(meta.configJson == header.metadata.at("config"));
    if (!meta.vocabJson.empty()) {
        try {
            const gpt2::Tokenizer tokenizer = gpt2::Tokenizer::fromJsonAndMerges(meta.vocabJson, meta.mergesText);
            GPT2_FUZZ_CHECK(tokenizer.decode(tokenizer.encode("Hello, world!")) == "Hello, world!");
        } catch (const gpt2::Error&) {
        }
    }
    return 0;
}
