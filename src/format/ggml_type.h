#pragma once
// ggml's tensor types that the engine reads (the float types and the block-quantized types of
// llama.cpp's GGUF files), and their decoding into the one form the GPU keeps: affine blocks, where
// each value is code * scale + offset, with 4- or 8-bit codes and one scale and offset per block of
// values along a row. Every supported type fits that form exactly (the arithmetic below is the one
// the GGUF specification gives for the type): 4-bit types keep 4-bit codes, 5-, 6- and 8-bit types
// 8-bit ones.
#include <cstddef>
#include <cstdint>
#include <string>
#include <memory>
#include <vector>

namespace gpt2 {

enum class GgmlType : std::uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    I8 = 24,  // never a GGUF weight here: a safetensors checkpoint's int8 tensor, refused by name
    BF16 = 30,
};

struct GgmlTypeInfo {
    GgmlType type;
    const char* name;
    int blockValues;  // values per stored block (1 for the float types)
    int blockBytes;
    // As affine blocks (quantized types only): code bits (4: codes 0..15, 8: codes -128..127), values
    // per scale, and whether the type has offsets (those without have offset 0 everywhere).
    int codeBits;
    int scaleValues;
    bool offsets;
    bool halfParams;  // every scale and offset is an fp16 value (those that are the block's own d and m)
};

// The type's description, or null for a type the engine does not read.
const GgmlTypeInfo* ggmlTypeInfo(std::uint32_t type);
// Any ggml type's name ("IQ2_XXS"), or "type N" for numbers ggml does not define.
std::string ggmlTypeName(std::uint32_t type);
// "F32, F16, BF16, Q8_0, ...": for error messages.
std::string supportedGgmlTypes();
bool isQuantized(GgmlType type);

// An allocator whose resize() leaves new elements as they are: the decoders write every code of a
// tensor, and zeroing them all first was a sizeable part of a GGUF load's work on the CPU.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
    template <typename U>
    struct rebind {
        using other = UninitializedAllocator<U>;
    };
    template <typename U>
    void construct(U* at) noexcept {
        ::new (static_cast<void*>(at)) U;
    }
};

// Rows of quantized values as affine blocks: value = codes[i] * scales[b] + offsets[b], b the block
// of i (i / scaleValues), everything row-major in the tensor's own order.
struct AffineBlocks {
    int codeBits = 8;
    int scaleValues = 32;
    std::vector<std::int8_t, UninitializedAllocator<std::int8_t>> codes;  // every one written by the decoder
    std::vector<float> scales;
    std::vector<float> offsets;  // empty: every offset is 0
};

// Decodes `count` values (a whole number of blocks) of a quantized type from their bytes.
AffineBlocks decodeAffineBlocks(GgmlType type, const std::uint8_t* bytes, std::int64_t count);
// The same in parts, for a reader that places them itself: the codes of `count` values to `codes`,
// and their scales and offsets (null: the type has none), scale i to scales[i * stride].
void decodeCodes(GgmlType type, const std::uint8_t* bytes, std::int64_t count, std::int8_t* codes);
void decodeScales(GgmlType type, const std::uint8_t* bytes, std::int64_t count, float* scales, float* offsets,
                  std::ptrdiff_t stride);
// The same for a type whose scales and offsets are fp16 values (GgmlTypeInfo::halfParams), as their
// fp16 bits: the block's own d (and m), or -8d for Q4_0's offset (Inf where that overflows), with no
// conversion through floats.
void decodeHalfScales(GgmlType type, const std::uint8_t* bytes, std::int64_t count, std::uint16_t* scales,
                      std::uint16_t* offsets, std::ptrdiff_t stride);
// Converts `count` values of a float type (F32, F16, BF16) to floats.
void decodeFloats(GgmlType type, const std::uint8_t* bytes, std::int64_t count, float* out);
// Any type's `count` values as floats: a float type's exactly, a block type's (whole blocks) as
// code * scale + offset.
void decodeValues(GgmlType type, const std::uint8_t* bytes, std::int64_t count, float* out);

}  // namespace gpt2
