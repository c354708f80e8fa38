#pragma once
// The bit layout of GGUF's block types: how one block's bytes give its codes and its scales and
// offsets, written once (the GGUF specification's dequantize_row_* in ggml's terms) for every reader
// that places them its own way (a writer: codes, scales, or the values as floats). In a header so that
// the CPU backend's kernels instantiate the float decoding under their own compile flags (WebAssembly
// SIMD in one build, none in the other); in an unnamed namespace so that those instantiations never
// merge with another build's.
#include <cstdint>

#include "format/ggml_type.h"
#include "util/error.h"
#include "util/half.h"

namespace gpt2 {
namespace {

constexpr int kSuper = 256;  // values in a K-quant super-block

inline float half(const std::uint8_t* p) { return halfToFloat(std::uint16_t(p[0] | p[1] << 8)); }

// A K-quant's 6-bit scale and min of sub-block j, packed in 12 bytes (the GGUF specification's
// get_scale_min_k4): the first four in the low bits of bytes 0-7, the rest split over bytes 8-11
// and the top bits of bytes 0-7.
inline void scaleMinK4(int j, const std::uint8_t* q, int& scale, int& min) {
    if (j < 4) {
        scale = q[j] & 63;
        min = q[j + 4] & 63;
    } else {
        scale = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// Each value as float(code) * scale + offset, in one pass: decodeBlock gives a sub-block's scale
// before its codes. `shift`: log2 of the values per scale, a constant, so that within a run of codes
// of one scale the compiler keeps the scale in a register and vectorizes.
template <int shift>
struct FloatWriter {
    float* at;
    float scales[16] = {};
    float offsets[16] = {};
    void scale(int sub, float s, float o) {
        scales[sub] = s;
        offsets[sub] = o;
    }
    void code(int i, int value) { at[i] = float(value) * scales[i >> shift] + offsets[i >> shift]; }
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

// Any block type's `count` values (whole blocks) as floats, code * scale + offset, in one pass.
inline void decodeBlockFloats(GgmlType type, const std::uint8_t* bytes, std::int64_t count, float* out) {
    const GgmlTypeInfo& info = *ggmlTypeInfo(std::uint32_t(type));
    const auto at = [&](std::int64_t block) { return out + block * info.blockValues; };
    if (info.scaleValues == 16)
        decodeBlocks(type, bytes, count, [&](std::int64_t block) { return FloatWriter<4>{at(block)}; });
    else
        decodeBlocks(type, bytes, count, [&](std::int64_t block) { return FloatWriter<5>{at(block)}; });
}

}  // namespace
}  // namespace gpt2
