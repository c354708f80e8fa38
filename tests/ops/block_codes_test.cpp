// The GPU's decoding of GGUF blocks (model/ops/block_codes.h) against the CPU's decoder
// (format/ggml_type.h, which the llama.cpp fixtures check): every quantized type, from random bytes
// (every bit pattern a block can hold), both ways a matrix runs, with padding outputs, a matrix
// staged in two runs, and texture limits small enough to fold the codes' layout over pages.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "format/ggml_type.h"
#include "model/ops/block_codes.h"
#include "support/gl_test_environment.h"

namespace gpt2 {
namespace {

struct Shape {
    int K;
    int outputs;  // not a multiple of 4 for some: padding channels
    bool transposed;
    int maxTextureSize;
};

// Texels of a quad texture as stored: four 32-bit channels each, row-major over (quad, texel).
std::vector<std::uint32_t> readTexels(Texture& t) {
    const TensorLayout& l = t.layout();
    std::vector<std::uint32_t> out(std::size_t(l.texelCount()) * 4);
    const bool nibbles = t.format() == TexelFormat::Int4Quads;
    l.forEachRowRect(0, l.rows, [&](int page, int x, int y, int w, int h, std::int64_t offset) {
        glBindFramebuffer(GL_READ_FRAMEBUFFER, t.framebuffer(page).id());
        glReadPixels(x, y, w, h, GL_RGBA_INTEGER, nibbles ? GL_UNSIGNED_INT : GL_INT, out.data() + offset * 4);
    });
    EXPECT_EQ(glGetError(), GLenum(GL_NO_ERROR));
    return out;
}

// Code (row, column) of the engine matrix from the texels of an Int8Quads or Int4Quads texture.
int storedCode(const std::vector<std::uint32_t>& texels, int texelsPerRow, bool nibbles, int row, int column) {
    const std::uint32_t* texel = texels.data() + (std::size_t(row / 4) * texelsPerRow + column / 4) * 4;
    if (nibbles) return int((texel[row % 4 / 2] >> (16 * (row % 2) + 4 * (column % 4))) & 15u);
    return int(std::int8_t(texel[row % 4] >> (8 * (column % 4))));
}

void expectCpuCodes(GgmlType type, const Shape& s, int runs) {
    const GgmlTypeInfo& info = *ggmlTypeInfo(std::uint32_t(type));
    const std::int64_t rowBytes = s.K / info.blockValues * info.blockBytes;
    std::mt19937 rng(std::uint32_t(type) * 131 + std::uint32_t(s.K + s.outputs));
    std::vector<std::uint8_t> bytes(std::size_t(rowBytes) * s.outputs);
    for (auto& b : bytes) b = std::uint8_t(rng());
    std::vector<std::int8_t> want(std::size_t(s.K) * s.outputs);
    for (int n = 0; n < s.outputs; ++n)
        decodeCodes(type, bytes.data() + n * rowBytes, s.K, want.data() + std::size_t(n) * s.K);

    const TextureLimits limits{s.maxTextureSize, 256};
    const int channels = (s.outputs + 3) / 4 * 4;
    const TexelFormat format = info.codeBits == 4 ? TexelFormat::Int4Quads : TexelFormat::Int8Quads;
    const int rows = s.transposed ? channels : s.K, cols = s.transposed ? s.K : s.outputs;
    Texture codes(TensorLayout::make((rows + 3) / 4, cols, limits, "codes"), format, "codes");
    Texture staged(TensorLayout::make(64, 4 * 64, limits, "blocks"), TexelFormat::Bits, "blocks");
    ASSERT_GE(staged.bytes(), rowBytes * s.outputs);
    ProgramCache programs;
    BlockDecoder decoder(programs, staged, codes, type, s.transposed, rowBytes, s.outputs);
    const int chunk = (channels / runs + 3) / 4 * 4;
    for (int first = 0; first < channels; first += chunk) {
        const int end = std::min(channels, first + chunk);
        staged.uploadBytes(bytes.data() + first * rowBytes, std::max(0, std::min(end, s.outputs) - first) * rowBytes);
        decoder.run(first, end);
    }

    const std::vector<std::uint32_t> texels = readTexels(codes);
    int differ = 0;
    for (int n = 0; n < channels; ++n)
        for (int k = 0; k < s.K; ++k) {
            const int expected = n < s.outputs ? want[std::size_t(n) * s.K + k] : 0;
            const int got =
                s.transposed ? storedCode(texels, codes.layout().texelsPerRow, format == TexelFormat::Int4Quads, n, k)
                             : storedCode(texels, codes.layout().texelsPerRow, format == TexelFormat::Int4Quads, k, n);
            if (got != expected && ++differ <= 5)
                ADD_FAILURE() << info.name << (s.transposed ? " transposed" : "") << ": output " << n << " input " << k
                              << " is " << got << ", the CPU decodes " << expected;
        }
    EXPECT_EQ(differ, 0) << info.name;
}

const GgmlType kTypes[] = {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                           GgmlType::Q5_1, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};

TEST(BlockCodes, EveryTypeDecodesAsOnTheCpuBothWays) {
    testing::ensureGlContext();
    for (const GgmlType type : kTypes)
        for (const bool transposed : {false, true}) expectCpuCodes(type, {512, 10, transposed, 4096}, 1);
}

TEST(BlockCodes, AMatrixStagedInRunsAndFoldedOverPagesDecodesTheSame) {
    testing::ensureGlContext();
    for (const GgmlType type : kTypes)
        for (const bool transposed : {false, true}) expectCpuCodes(type, {256, 22, transposed, 16}, 3);
}

}  // namespace
}  // namespace gpt2
