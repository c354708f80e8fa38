#include "format/ggml_type.h"

#include <cstring>

#include "util/error.h"
#include "util/half.h"

namespace gpt2 {
namespace {

constexpr int kSuper = 256;  // values in a K-quant super-block

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

float half(const std::uint8_t* p) { return halfToFloat(std::uint16_t(p[0] | p[1] << 8)); }

// A K-quant's 6-bit scale and min of sub-block j, packed in 12 bytes (the GGUF specification's
// get_scale_min_k4): the first four in the low bits of bytes 0-7, the rest split over bytes 8-11
// and the top bits of bytes 0-7.
void scaleMinK4(int j, const std::uint8_t* q, int& scale, int& min) {
    if (j < 4) {
        scale = q[j] & 63;
        min = q[j + 4] & 63;
    } else {
        scale = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

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

template <GgmlType type, typename Writer>
void decodeBlock(const std::uint8_t* b, Writer w) {
    switch (type) {
        case GgmlType::Q8_0:
            w.scale(0, half(b), 0);
            for (int i = 0; i < 32; ++i) w.code(i, std::int8_t(b[2 + i]));
            return;
        case GgmlType::Q4_0:
        case GgmlType::Q4_1: {
            const float d = half(b);
            constexpr bool withMin = type == GgmlType::Q4_1;
            w.scale(0, d, withMin ? half(b + 2) : -8 * d);
            const std::uint8_t* qs = b + (withMin ? 4 : 2);
            for (int j = 0; j < 16; ++j) {
                w.code(j, qs[j] & 0xF);
                w.code(j + 16, qs[j] >> 4);
            }
            return;
        }
        case GgmlType::Q5_0:
        case GgmlType::Q5_1: {
            constexpr bool withMin = type == GgmlType::Q5_1;
            const float d = half(b);
            const std::uint8_t* qh = b + (withMin ? 4 : 2);
            const std::uint32_t high = std::uint32_t(qh[0]) | qh[1] << 8 | qh[2] << 16 | std::uint32_t(qh[3]) << 24;
            const std::uint8_t* qs = qh + 4;
            // Q5_0's values are d * (q - 16): signed codes, no offset.
            const int shift = withMin ? 0 : 16;
            w.scale(0, d, withMin ? half(b + 2) : 0);
            for (int j = 0; j < 16; ++j) {
                w.code(j, int((qs[j] & 0xF) | ((high >> j) & 1) << 4) - shift);
                w.code(j + 16, int((qs[j] >> 4) | ((high >> (j + 16)) & 1) << 4) - shift);
            }
            return;
        }
        case GgmlType::Q4_K:
        case GgmlType::Q5_K: {
            const float d = half(b), dmin = half(b + 2);
            const std::uint8_t* scales = b + 4;
            constexpr bool five = type == GgmlType::Q5_K;
            const std::uint8_t* qh = scales + 12;
            const std::uint8_t* qs = five ? qh + 32 : qh;
            for (int chunk = 0; chunk < 4; ++chunk) {
                for (int half = 0; half < 2; ++half) {
                    int scale, min;
                    scaleMinK4(2 * chunk + half, scales, scale, min);
                    w.scale(2 * chunk + half, d * float(scale), -(dmin * float(min)));
                    for (int l = 0; l < 32; ++l) {
                        const int low = half ? qs[32 * chunk + l] >> 4 : qs[32 * chunk + l] & 0xF;
                        const int high = five ? (qh[l] >> (2 * chunk + half)) & 1 : 0;
                        w.code(64 * chunk + 32 * half + l, low | high << 4);
                    }
                }
            }
            return;
        }
        case GgmlType::Q6_K: {
            const std::uint8_t* ql = b;
            const std::uint8_t* qh = b + kSuper / 2;
            const auto* sc = reinterpret_cast<const std::int8_t*>(b + kSuper / 2 + kSuper / 4);
            const float d = half(b + kSuper / 2 + kSuper / 4 + kSuper / 16);
            for (int s = 0; s < 16; ++s) w.scale(s, d * float(sc[s]), 0);
            // Each half of the super-block: 128 values from 64 low-nibble bytes and 32 high-bit bytes.
            for (int h = 0; h < 2; ++h)
                for (int l = 0; l < 32; ++l) {
                    const std::uint8_t* lo = ql + 64 * h;
                    const int hi = qh[32 * h + l];
                    const int base = 128 * h + l;
                    w.code(base, int((lo[l] & 0xF) | (hi & 3) << 4) - 32);
                    w.code(base + 32, int((lo[l + 32] & 0xF) | ((hi >> 2) & 3) << 4) - 32);
                    w.code(base + 64, int((lo[l] >> 4) | ((hi >> 4) & 3) << 4) - 32);
                    w.code(base + 96, int((lo[l + 32] >> 4) | ((hi >> 6) & 3) << 4) - 32);
                }
            return;
        }
        default: return;  // decodeBlocks takes no other type
    }
}

// Decodes `blocks` consecutive blocks, each through the writer that `writerOf(block)` gives.
template <GgmlType type, typename WriterOf>
void decodeBlocksOf(const std::uint8_t* bytes, std::int64_t blocks, const WriterOf& writerOf) {
    const int size = ggmlTypeInfo(std::uint32_t(type))->blockBytes;
    for (std::int64_t block = 0; block < blocks; ++block) decodeBlock<type>(bytes + block * size, writerOf(block));
}

// The same for a type known at run time: the switch is taken once per run of blocks, not per block.
template <typename WriterOf>
void decodeBlocks(GgmlType type, const std::uint8_t* bytes, std::int64_t count, const WriterOf& writerOf) {
    const GgmlTypeInfo* info = ggmlTypeInfo(std::uint32_t(type));
    if (!info || info->blockValues == 1)
        fail("decoding blocks: ", ggmlTypeName(std::uint32_t(type)), " is not a quantized type");
    if (count % info->blockValues != 0)
        fail("decoding blocks: ", count, " values are not whole ", info->name, " blocks of ", info->blockValues);
    const std::int64_t blocks = count / info->blockValues;
    switch (type) {
        case GgmlType::Q8_0: return decodeBlocksOf<GgmlType::Q8_0>(bytes, blocks, writerOf);
        case GgmlType::Q4_0: return decodeBlocksOf<GgmlType::Q4_0>(bytes, blocks, writerOf);
        case GgmlType::Q4_1: return decodeBlocksOf<GgmlType::Q4_1>(bytes, blocks, writerOf);
        case GgmlType::Q5_0: return decodeBlocksOf<GgmlType::Q5_0>(bytes, blocks, writerOf);
        case GgmlType::Q5_1: return decodeBlocksOf<GgmlType::Q5_1>(bytes, blocks, writerOf);
        case GgmlType::Q4_K: return decodeBlocksOf<GgmlType::Q4_K>(bytes, blocks, writerOf);
        case GgmlType::Q5_K: return decodeBlocksOf<GgmlType::Q5_K>(bytes, blocks, writerOf);
        case GgmlType::Q6_K: return decodeBlocksOf<GgmlType::Q6_K>(bytes, blocks, writerOf);
        default: return;
    }
}

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
    const GgmlTypeInfo& info = *ggmlTypeInfo(std::uint32_t(type));
    const std::int64_t subs = count / info.scaleValues;
    // Reused: the CPU backend decodes a matrix row by row, and allocating per row cost more than
    // the decoding.
    thread_local std::vector<std::int8_t> codes;
    thread_local std::vector<float> scales, offsets;
    codes.resize(std::size_t(count));
    scales.resize(std::size_t(subs));
    offsets.assign(std::size_t(subs), 0.0f);
    decodeCodes(type, bytes, count, codes.data());
    decodeScales(type, bytes, count, scales.data(), info.offsets ? offsets.data() : nullptr, 1);
    for (std::int64_t sub = 0; sub < subs; ++sub) {
        const float scale = scales[std::size_t(sub)], offset = offsets[std::size_t(sub)];
        const std::int8_t* c = codes.data() + sub * info.scaleValues;
        float* o = out + sub * info.scaleValues;
        for (int i = 0; i < info.scaleValues; ++i) o[i] = float(c[i]) * scale + offset;
    }
}

}  // namespace gpt2
