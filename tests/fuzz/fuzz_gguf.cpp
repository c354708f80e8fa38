// Arbitrary bytes as a whole GGUF file. Every tensor the reader accepts must lie inside the file,
// be whole blocks of its type and not overlap another; decoding it (affine blocks or floats) must
// stay in bounds; GPT-2's config and tokenizer from the metadata either build or throw gpt2::Error.
#include <optional>
#include <string>
#include <vector>

#include "format/ggml_type.h"
#include "format/gguf.h"
#include "format/gguf_gpt2.h"
#include "fuzz_common.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

GPT2_FUZZ_ENTRY(gguf)(const std::uint8_t* data, std::size_t size) {
    std::optional<gpt2::GgufHeader> parsed;
    try {
        // A streaming reader's attempts on prefixes of the file, then the whole file.
        for (std::size_t cut : {size / 3, size / 2}) {
            auto partial = gpt2::parseGgufHeader(data, cut, size, "fuzz.gguf");
            if (partial) GPT2_FUZZ_CHECK(partial->dataOffset <= size);
        }
        parsed = gpt2::parseGgufHeader(data, size, size, "fuzz.gguf");
    } catch (const gpt2::Error&) {
        return 0;
    }
    GPT2_FUZZ_CHECK(parsed.has_value());
    const gpt2::GgufHeader& header = *parsed;
    GPT2_FUZZ_CHECK(header.dataOffset <= size);
    std::uint64_t previousEnd = 0;
    for (const gpt2::GgufTensor& t : header.tensors) {
        const gpt2::GgmlTypeInfo* info = gpt2::ggmlTypeInfo(std::uint32_t(t.type));
        GPT2_FUZZ_CHECK(info != nullptr);
        GPT2_FUZZ_CHECK(t.begin >= previousEnd && t.begin <= t.end && header.dataOffset + t.end <= size);
        GPT2_FUZZ_CHECK(t.dims[0] % info->blockValues == 0);
        const std::int64_t count = t.elementCount();
        GPT2_FUZZ_CHECK(std::uint64_t(count / info->blockValues * info->blockBytes) == t.end - t.begin);
        previousEnd = t.end;
        if (count > (1 << 20)) continue;  // bounded work per input
        const std::uint8_t* bytes = data + header.dataOffset + t.begin;
        if (gpt2::isQuantized(t.type)) {
            const gpt2::AffineBlocks blocks = gpt2::decodeAffineBlocks(t.type, bytes, count);
            GPT2_FUZZ_CHECK(blocks.codes.size() == std::size_t(count));
            for (std::int8_t code : blocks.codes) GPT2_FUZZ_CHECK(blocks.codeBits == 8 || (code >= 0 && code < 16));
        } else {
            std::vector<float> out(static_cast<std::size_t>(count));
            gpt2::decodeFloats(t.type, bytes, count, out.data());
        }
    }
    try {
        gpt2::ggufGpt2Config(header);
    } catch (const gpt2::Error&) {
    }
    try {
        const gpt2::Tokenizer tokenizer = gpt2::Tokenizer::fromTokensAndMerges(
            header.strings("tokenizer.ggml.tokens"), header.strings("tokenizer.ggml.merges"), "fuzz.gguf");
        const std::string sample = "Hello, world! 123";
        GPT2_FUZZ_CHECK(tokenizer.decode(tokenizer.encode(sample)) == sample);
    } catch (const gpt2::Error&) {
    }
    return 0;
}
