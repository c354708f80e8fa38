// Arbitrary bytes as a whole safetensors file: the 8-byte length, the JSON header and the data
// section. Every tensor the parser accepts must lie inside the data section with a size matching its
// shape and dtype, and converting it to floats must stay in bounds.
#include <string>
#include <vector>

#include "format/safetensors.h"
#include "fuzz_common.h"
#include "util/error.h"

GPT2_FUZZ_ENTRY(safetensors)(const std::uint8_t* data, std::size_t size) {
    // The streaming reader's first step: how many header bytes to fetch.
    try {
        const std::uint64_t headerEnd = gpt2::safetensorsHeaderBytes(data, size < 8 ? size : 8, size, "fuzz");
        GPT2_FUZZ_CHECK(headerEnd >= 8 && headerEnd <= size);
    } catch (const gpt2::Error&) {
    }

    gpt2::SafetensorsHeader header;
    try {
        header = gpt2::parseSafetensorsHeader(data, size, size, "fuzz.safetensors");
    } catch (const gpt2::Error&) {
        return 0;
    }
    GPT2_FUZZ_CHECK(header.dataOffset >= 8 && header.dataOffset <= size);
    const std::uint64_t dataSize = size - header.dataOffset;
    for (const auto& [name, info] : header.tensors) {
        GPT2_FUZZ_CHECK(info.name == name);
        GPT2_FUZZ_CHECK(header.find(name) == &info);
        GPT2_FUZZ_CHECK(info.begin <= info.end && info.end <= dataSize);
        for (const std::int64_t d : info.shape) GPT2_FUZZ_CHECK(d >= 0);
        const std::int64_t count = info.elementCount();
        GPT2_FUZZ_CHECK(count >= 0);
        GPT2_FUZZ_CHECK(static_cast<std::uint64_t>(count) * gpt2::dtypeSize(info.dtype) == info.end - info.begin);
        std::vector<float> out(static_cast<std::size_t>(count));
        gpt2::convertToFloat(info.dtype, data + header.dataOffset + info.begin, out.size(), out.data());
    }
    try {
        header.tensor("\x01 no such tensor");
        GPT2_FUZZ_CHECK(header.tensors.count("\x01 no such tensor"));
    } catch (const gpt2::Error&) {
    }
    return 0;
}
