#include "format/ggml_type.h"

#include <cstring>

#include "format/ggml_blocks.h"
#include "util/error.h"

namespace gpt2 {
namespace {

// blockValues, blockBytes (ggml-common.h's block structs), then the affine form.
constexpr GgmlTypeInfo kTypes[] = {
    {GgmlType::F32, "F32", 1, 4, 0, 0, false, false},
    {GgmlType::F16, "F16", 1, 2, 0, 0, false, false},
    {GgmlType::BF16, "BF16", 1, 2, 0, 0, false, false},
    {GgmlType::Q8_0, "Q8_0", 32, 2 + 32, 8, 32, false, true},
    {GgmlType::Q4_0, "Q4_0", 32, 2 + 16, 4, 32, true, true},  // offset -8d: an fp16 value too
    {GgmlType::Q4_1, "Q4_1", 32, 2 + 2 + 16, 4, 32, true, true},
    {GgmlType::Q5_0, "Q5_0", 32, 2 + 4 + 16, 8, 32, false, true},
    {GgmlType::Q5_1, "Q5_1", 32, 2 + 2 + 4 + 16, 8, 32, true, true},
    // K-quants' scales are products d * sc, of up to 19 significant bits: fp32.
    {GgmlType::Q4_K, "Q4_K", kSuper, 2 + 2 + 12 + kSuper / 2, 4, 32, true, false},
    {GgmlType::Q5_K, "Q5_K", kSuper, 2 + 2 + 12 + kSuper / 8 + kSuper / 2, 8, 32, true, false},
    {GgmlType::Q6_K, "Q6_K", kSuper, kSuper / 2 + kSuper / 4 + kSuper / 16 + 2, 8, 16, false, false},
};

// Every type ggml numbers, for messages about the ones the engine does not read.
const char* const kAllNames[] = {
    "F32",        "F16",        "Q4_0",       "Q4_1",  "Q4_2",     "Q4_3",     "Q5_0",     "Q5_1",    "Q8_0",
    "Q8_1",       "Q2_K",       "Q3_K",       "Q4_K",  "Q5_K",     "Q6_K",     "Q8_K",     "IQ2_XXS", "IQ2_XS",
    "IQ3_XXS",    "IQ1_S",      "IQ4_NL",     "IQ3_S", "IQ2_S",    "IQ4_XS",   "I8",       "I16",     "I32",
    "I64",        "F64",        "IQ1_M",      "BF16",  "Q4_0_4_4", "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",   "TQ2_0",
    "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4", "NVFP4",    "Q1_0",     "Q2_0"};

// Writers of one block's decoding: its codes (to `at`, the block's first value), or its scales and
// offsets (scale `sub` of the block to at[sub * stride]). Each ignores what the other writes, and
// inlined, what it ignores is not computed.
struct CodeWriter {
    std::int8_t* at;
    void code(int i, int value) { at[i] = std::int8_t(value); }
    void scale(int, float, float) {}
};
struct ScaleWriter {
    float* scales;
    float* offsets;  // null: the type has none
    std::ptrdiff_t stride;
    void code(int, int) {}
    void scale(int sub, float scale, float offset) {
        scales[sub * stride] = scale;
        if (offsets) offsets[sub * stride] = offset;
    }
};

}  // namespace

const GgmlTypeInfo* ggmlTypeInfo(std::uint32_t type) {
    for (const GgmlTypeInfo& info : kTypes)
        if (std::uint32_t(info.type) == type) return &info;
    return nullptr;
}

std::string ggmlTypeName(std::uint32_t type) {
    if (type < std::size(kAllNames)) return kAllNames[type];
    return "type " + std::to_string(type);
}

std::string supportedGgmlTypes() {
    std::string names;
    for (const GgmlTypeInfo& info : kTypes) names += (names.empty() ? "" : ", ") + std::string(info.name);
    return names;
}

bool isQuantized(GgmlType type) { return ggmlTypeInfo(std::uint32_t(type))->blockValues > 1; }

void decodeCodes(GgmlType type, const std::uint8_t* bytes, std::int64_t count, std::int8_t* codes) {
    const GgmlTypeInfo* info = ggmlTypeInfo(std::uint32_t(type));
    const int values = info ? info->blockValues : 1;
    decodeBlocks(type, bytes, count, [&](std::int64_t block) { return CodeWriter{codes + block * values}; });
}

void decodeScales(GgmlType type, const std::uint8_t* bytes, std::int64_t count, float* scales, float* offsets,
                  std::ptrdiff_t stride) {
    const GgmlTypeInfo* info = ggmlTypeInfo(std::uint32_t(type));
    const int perBlock = info ? info->blockValues / info->scaleValues : 1;
    decodeBlocks(type, bytes, count, [&](std::int64_t block) {
        const std::ptrdiff_t first = block * perBlock * stride;
        return ScaleWriter{scales + first, offsets ? offsets + first : nullptr, stride};
    });
}

void decodeHalfScales(GgmlType type, const std::uint8_t* bytes, std::int64_t count, std::uint16_t* scales,
                      std::uint16_t* offsets, std::ptrdiff_t stride) {
    const GgmlTypeInfo* info = ggmlTypeInfo(std::uint32_t(type));
    if (!info || !info->halfParams || info->blockValues != info->scaleValues)
        fail("decoding fp16 scales: ", ggmlTypeName(std::uint32_t(type)), " has no fp16 scale per block");
    if (count % info->blockValues != 0)
        fail("decoding blocks: ", count, " values are not whole ", info->name, " blocks of ", info->blockValues);
    const auto bits = [](const std::uint8_t* p) { return std::uint16_t(p[0] | p[1] << 8); };
    for (std::int64_t block = 0; block < count / info->blockValues; ++block) {
        const std::uint8_t* b = bytes + block * info->blockBytes;
        const std::uint16_t d = bits(b);
        scales[block * stride] = d;
        if (!offsets) continue;
        if (type != GgmlType::Q4_0) {
            offsets[block * stride] = bits(b + 2);
            continue;
        }
        // -8d: the sign flipped and 3 added to a normal exponent that stays below Inf's; otherwise
        // (subnormal, or too large) through floats, rounded as they come.
        const int exponent = (d >> 10) & 31;
        offsets[block * stride] = exponent > 0 && exponent < 28 ? std::uint16_t((d ^ 0x8000u) + (3u << 10))
                                                                : floatToHalf(-8.0f * halfToFloat(d));
    }
}

AffineBlocks decodeAffineBlocks(GgmlType type, const std::uint8_t* bytes, std::int64_t count) {
    const GgmlTypeInfo* info = ggmlTypeInfo(std::uint32_t(type));
    if (!info || info->blockValues == 1)
        fail("decodeAffineBlocks: ", ggmlTypeName(std::uint32_t(type)), " is not quantized");
    AffineBlocks out;
    out.codeBits = info->codeBits;
    out.scaleValues = info->scaleValues;
    out.codes.resize(std::size_t(count));
    out.scales.resize(std::size_t(count / info->scaleValues));
    if (info->offsets) out.offsets.resize(out.scales.size());
    decodeCodes(type, bytes, count, out.codes.data());
    decodeScales(type, bytes, count, out.scales.data(), info->offsets ? out.offsets.data() : nullptr, 1);
    return out;
}

void decodeFloats(GgmlType type, const std::uint8_t* bytes, std::int64_t count, float* out) {
    switch (type) {
        case GgmlType::F32: std::memcpy(out, bytes, std::size_t(count) * 4); return;
        case GgmlType::F16:
            for (std::int64_t i = 0; i < count; ++i) out[i] = half(bytes + 2 * i);
            return;
        case GgmlType::BF16:
            for (std::int64_t i = 0; i < count; ++i)
                out[i] = bf16ToFloat(std::uint16_t(bytes[2 * i] | bytes[2 * i + 1] << 8));
            return;
        default: fail("decodeFloats: ", ggmlTypeName(std::uint32_t(type)), " is not a float type");
    }
}

void decodeValues(GgmlType type, const std::uint8_t* bytes, std::int64_t count, float* out) {
    if (!isQuantized(type)) return decodeFloats(type, bytes, count, out);
    decodeBlockFloats(type, bytes, count, out);
}

}  // namespace gpt2
