#include "model/model_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "format/gguf_gpt2.h"
#include "gl/pass.h"
#include "model/ops/block_codes.h"
#include "model/ops/quantize.h"
#include "util/error.h"
#include "util/finite.h"
#include "util/half.h"

namespace gpt2 {
namespace {

// weights 'int4': blocks of 32 inputs, or of the most of 16, 8 and 4 that divide the matrix's inputs
// (which are whole texels).
BlockFormat int4Blocks(const MatrixSpec& spec) {
    const int k = outputChannelsAreRows(spec) ? spec.cols : spec.rows;
    int rows = 32;
    while (k % rows != 0) rows /= 2;
    return {4, rows, true, false};
}

std::string withoutPrefix(const std::string& name) {
    const std::string prefix = "transformer.";
    return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

}  // namespace

ModelWeights::ModelWeights(const ModelConfig& config, TexelFormat format, const TextureLimits& limits,
                           Texture::Allocation when, const BlockFormats& blocks)
    : config_(config), limits_(limits) {
    for (const MatrixSpec& spec : engineMatrices(config)) {
        auto texture = [&](int rows, int cols, TexelFormat f, const std::string& name) {
            return std::make_unique<Texture>(TensorLayout::make(rows, cols, limits, name.c_str()), f, name, when);
        };
        auto rowsIn = [](int rows, TexelFormat f) { return (rows + rowsPerTexel(f) - 1) / rowsPerTexel(f); };
        Slot slot{spec, nullptr, nullptr, nullptr, 0, false, false};
        const auto block = blocks.find(spec.name);
        const bool int4 = block == blocks.end() && format == TexelFormat::Int4Quads && quantizedWithInt8(spec);
        if (block != blocks.end() || int4) {
            const BlockFormat b = int4 ? int4Blocks(spec) : block->second;
            slot.quantizedHere = int4;
            const TexelFormat codes = b.codeBits == 4 ? TexelFormat::Int4Quads : TexelFormat::Int8Quads;
            const int k = outputChannelsAreRows(spec) ? spec.cols : spec.rows;
            const int channels = outputChannelsAreRows(spec) ? spec.rows : spec.cols;
            if (spec.rows == 1 || b.blockRows % 4 != 0 || k % b.blockRows != 0)
                fail("model weights: ", spec.name, " cannot be kept in blocks of ", b.blockRows, " of its ", k,
                     " inputs");
            slot.texture = texture(rowsIn(spec.rows, codes), spec.cols, codes, spec.name);
            const TexelFormat params = b.halfParams ? TexelFormat::Float16 : TexelFormat::Float32;
            slot.scales = texture(k / b.blockRows, channels, params, spec.name + " scales");
            if (b.offsets) slot.offsets = texture(k / b.blockRows, channels, params, spec.name + " offsets");
            slot.blockRows = b.blockRows;
        } else {
            // LayerNorm parameters and biases stay fp32: they are tiny and fp16 would add error for nothing.
            TexelFormat texelFormat = spec.rows == 1 ? TexelFormat::Float32 : format;
            if ((texelFormat == TexelFormat::Int8Quads || texelFormat == TexelFormat::Int4Quads) &&
                !quantizedWithInt8(spec))
                texelFormat = TexelFormat::Float16;
            slot.texture = texture(rowsIn(spec.rows, texelFormat), spec.cols, texelFormat, spec.name);
            if (texelFormat == TexelFormat::Int8Quads)
                slot.scales = texture(1, int8Channels(spec), TexelFormat::Float32, spec.name + " scales");
        }
        slots_[spec.name] = std::move(slot);
    }
}

void ModelWeights::allocate() {
    std::vector<Texture*> textures;
    for (auto& [name, s] : slots_)
        for (Texture* t : {s.texture.get(), s.scales.get(), s.offsets.get()})
            if (t) textures.push_back(t);
    Texture::allocateAll(textures, "allocating the " + std::to_string(textures.size()) + " weight textures");
}

bool ModelWeights::wants(const std::string& name) const { return slots_.count(withoutPrefix(name)) != 0; }

bool ModelWeights::arrivesInBlocks(const std::string& name) const {
    const Slot& s = slot(name);
    return s.blockRows > 0 && !s.quantizedHere;
}

ModelWeights::Slot& ModelWeights::slot(const std::string& name) {
    return const_cast<Slot&>(static_cast<const ModelWeights&>(*this).slot(name));
}

const ModelWeights::Slot& ModelWeights::slot(const std::string& name) const {
    auto it = slots_.find(withoutPrefix(name));
    if (it == slots_.end()) fail("model weights: ", name, " is not a GPT-2 weight");
    return it->second;
}

void ModelWeights::upload(const std::string& name, const std::vector<std::int64_t>& shape,
                          const std::vector<float>& values) {
    Slot& s = slot(name);
    if (s.blockRows > 0 && !s.quantizedHere) fail("tensor ", name, " was declared quantized, and arrived as floats");
    if (shape != s.spec.sourceShape)
        fail("tensor ", name, " has shape ", shapeText(shape), ", expected ", shapeText(s.spec.sourceShape),
             " from config.json");
    uploadMatrix(s, packMatrix(config_, s.spec, values), s.spec.cols);
}

void ModelWeights::upload(const std::string& name, const std::vector<std::int64_t>& shape, DType dtype,
                          const std::uint8_t* bytes, bool transposed) {
    Slot& s = slot(name);
    const TexelFormat format = s.texture->format();
    const bool floats =
        format == TexelFormat::Float32 || format == TexelFormat::Float16 || format == TexelFormat::HalfPairs;
    std::int64_t count = 1;
    for (const std::int64_t dim : shape) count *= dim;
    if (!(floats && s.blockRows == 0) && !quantizedOnGpu(s))
        fail("tensor ", name, " was declared quantized, and arrived as floats");
    const bool half = dtype == DType::F16;
    // A transposed tensor goes up as it is when its stored rows are whole texels too, and unless its
    // fp32 values are to be kept in fp16: a render target rounds as the GPU likes, the CPU as
    // floatToHalf does.
    const bool keptInHalf = format == TexelFormat::Float16 || format == TexelFormat::Int4Quads;
    if ((dtype != DType::F32 && dtype != DType::F16) || shape != s.spec.sourceShape ||
        !packedInPlace(config_, s.spec) || (transposed && (shape.front() % 4 != 0 || (!half && keptInHalf)))) {
        std::vector<float> values(static_cast<std::size_t>(count));
        convertToFloat(dtype, bytes, values.size(), values.data());
        return upload(name, shape, transposed ? gpt2::transposed(values, shape.back(), shape.front()) : values);
    }
    if (const std::int64_t i = firstNonFinite(bytes, count, half); i >= 0) {
        float value = 0.0f;
        if (half)
            value = halfToFloat(std::uint16_t(bytes[2 * i] | bytes[2 * i + 1] << 8));
        else
            std::memcpy(&value, bytes + 4 * i, 4);
        // Named by its index in the Hugging Face shape.
        failNonFinite(s.spec, value, transposed ? shape.back() * (i % shape.front()) + i / shape.front() : i);
    }
    if (transposed)
        uploadTransposed(s, bytes, int(shape.front()), half);
    else
        uploadStream(s, bytes, int(count / s.spec.cols), s.spec.cols, half);
}

void ModelWeights::uploadTransposed(Slot& s, const std::uint8_t* bytes, int inputs, bool half) {
    if (!programs_) fail("model weights: ", s.spec.name, " is transposed on the GPU, and no programs were given");
    // The tensor as stored, [outputs, inputs]; then the engine's [inputs, outputs] rendered from it,
    // straight into a float texture, or into the staging texture of the pass that quantizes it, or as
    // fp32 for the pass that pairs it. Each holds the stored values exactly (an fp16 render target may
    // flush subnormals, as sampling one may anyway).
    const int outputs = s.spec.cols;
    Texture stored(TensorLayout::make(outputs, inputs, limits_, s.spec.name.c_str()),
                   half ? TexelFormat::Bits : TexelFormat::Float32, s.spec.name + " as stored",
                   Texture::Allocation::Staging);
    stored.uploadTexelStream(bytes, outputs, half);
    const auto transpose = [&](Texture& into) {
        Pass(*programs_, "rows_from_stored_columns.frag", "", {&into}, {{"u_x", &stored}})
            .set("u_stored_cols", inputs)
            .run(0, into.rows());
    };
    const TexelFormat format = s.texture->format();
    if (format == TexelFormat::Float32 || format == TexelFormat::Float16) {
        transpose(*s.texture);
    } else if (quantizedOnGpu(s)) {
        Texture staging = stagingFor(s, outputs, half);
        transpose(staging);
        quantizeStaged(s, staging);
    } else {
        Texture engine(TensorLayout::make(s.texture->rows(), outputs, limits_, s.spec.name.c_str()),
                       TexelFormat::Float32, s.spec.name + " transposed", Texture::Allocation::Staging);
        transpose(engine);
        pairsPass(s, engine).set("u_first_row", 0).run(0, s.texture->rows());
    }
    s.uploaded = true;
}

Pass ModelWeights::pairsPass(Slot& s, const Texture& staging) const {
    return Pass(*programs_, "half_pairs_from_stream.frag", "", {s.texture.get()}, {{"u_x", &staging}});
}

void ModelWeights::uploadStream(Slot& s, const std::uint8_t* bytes, int rows, int cols, bool half) {
    if (quantizedOnGpu(s)) {
        Texture staging = stagingFor(s, cols, half);
        staging.uploadTexelStream(bytes, rows, half);
        quantizeStaged(s, staging);
    } else if (s.texture->format() == TexelFormat::HalfPairs) {
        pairsOnGpu(s, bytes, rows, cols, half);
    } else {
        s.texture->uploadTexelStream(bytes, rows, half);
    }
    s.uploaded = true;
}

void ModelWeights::pairsOnGpu(Slot& s, const std::uint8_t* bytes, int rows, int cols, bool half) {
    if (!programs_) fail("model weights: ", s.spec.name, " is converted on the GPU, and no programs were given");
    // Staged a few MB at a time (an even number of rows: whole pairs), so that loading never holds a
    // second copy of a large matrix; rows past the stream are zeros. fp16 values are staged as their
    // bits (an integer texture: sampling fp16 may flush subnormals), fp32 ones as floats.
    constexpr std::int64_t kStagingBytes = 16 << 20;
    const int all = s.texture->rows(), valueBytes = half ? 2 : 4;
    const int chunk = std::min(all, std::max(2, int(kStagingBytes / (std::int64_t(cols) * valueBytes)) / 2 * 2));
    Texture staging(TensorLayout::make(chunk, cols, limits_, s.spec.name.c_str()),
                    half ? TexelFormat::Bits : TexelFormat::Float32, s.spec.name + " as stored",
                    Texture::Allocation::Staging);
    Pass pairs = pairsPass(s, staging);
    for (int first = 0; first < all; first += chunk) {
        const int end = std::min(all, first + chunk);
        staging.uploadTexelStream(bytes + std::int64_t(first) * cols * valueBytes,
                                  std::max(0, std::min(end, rows) - first), half);
        pairs.set("u_first_row", first).run(first, end);
    }
}

bool ModelWeights::quantizedOnGpu(const Slot& s) {
    return s.quantizedHere || (s.texture->format() == TexelFormat::Int8Quads && s.blockRows == 0);
}

Texture ModelWeights::stagingFor(const Slot& s, int cols, bool halfValues) const {
    if (!programs_) fail("model weights: ", s.spec.name, " is quantized on the GPU, and no programs were given");
    // int8 stages values as precise as they are (fp32 weights in fp32, so that they give the codes
    // that quantizeInt8 gives; fp16 weights in fp16, half the bytes); 4-bit blocks stage fp16, as
    // their rule says. The passes read whole quads of rows: the rows past the matrix are zeros.
    const bool fp32 = s.texture->format() == TexelFormat::Int8Quads && !halfValues;
    return Texture(TensorLayout::make((s.spec.rows + 3) / 4 * 4, cols, limits_, s.spec.name.c_str()),
                   fp32 ? TexelFormat::Float32 : TexelFormat::Float16, s.spec.name + " before quantizing",
                   Texture::Allocation::Staging);
}

void ModelWeights::quantizeStaged(Slot& s, const Texture& staging) {
    const bool int8 = s.texture->format() == TexelFormat::Int8Quads, transposed = outputChannelsAreRows(s.spec);
    // int8 has one block: the whole of K.
    const int blockTexels = !int8 ? s.blockRows / 4 : transposed ? staging.layout().texelsPerRow : staging.rows() / 4;
    quantizeToBlocks(*programs_, staging, {*s.texture, *s.scales, s.offsets.get(), blockTexels}, transposed);
}

void ModelWeights::uploadMatrix(Slot& s, const std::vector<float>& matrix, int cols) {
    if (!quantizedOnGpu(s)) {
        s.texture->uploadRows(0, s.spec.rows, matrix.data());
    } else {
        Texture staging = stagingFor(s, cols, false);
        std::vector<float> padded(std::size_t(staging.rows()) * std::size_t(cols), 0.0f);
        std::copy(matrix.begin(), matrix.end(), padded.begin());
        staging.uploadRows(0, staging.rows(), padded.data());
        quantizeStaged(s, staging);
    }
    s.uploaded = true;
}

void ModelWeights::uploadBlocks(const std::string& name, const BlockMatrix& m) {
    Slot& s = slot(name);
    if (s.blockRows == 0) fail("tensor ", name, " was not declared quantized, and arrived in blocks");
    const bool half = !m.halfScales.empty();
    const std::size_t channels = std::size_t(m.channels);
    const auto corrupt = [&](const char* what, std::size_t i, float value) {
        fail("tensor ", name, " holds ", what, " of ", value, " in block ", i / channels, " of output channel ",
             i % channels, "; the file is corrupt");
    };
    for (const auto* values : {&m.scales, &m.offsets})
        for (std::size_t i = 0; i < values->size(); ++i)
            if (!std::isfinite((*values)[i])) corrupt(values == &m.scales ? "a scale" : "an offset", i, (*values)[i]);
    for (const auto* bits : {&m.halfScales, &m.halfOffsets})
        for (std::size_t i = 0; i < bits->size(); ++i)
            if (((*bits)[i] & 0x7C00u) == 0x7C00u)  // fp16 Inf or NaN
                corrupt(bits == &m.halfScales ? "a scale" : "an offset", i, halfToFloat((*bits)[i]));
    const bool offsets = !(half ? m.halfOffsets.empty() : m.offsets.empty());
    if (offsets != bool(s.offsets) || m.blocks != s.scales->rows() ||
        m.channels != s.scales->layout().texelsPerRow * 4 || half != (s.scales->format() == TexelFormat::Float16))
        fail("tensor ", name, ": ", m.blocks, " blocks of ", m.channels, " channels", offsets ? " with offsets" : "",
             half ? " in fp16" : "", " arrived for ", s.scales->rows(), " of ", s.scales->layout().texelsPerRow * 4,
             s.offsets ? " with offsets" : "", s.scales->format() == TexelFormat::Float16 ? " in fp16" : "");
    decodeOnGpu(s, m);
    // The scales and offsets are the rows of their textures' texels, fp16 bits or floats as stored.
    s.scales->uploadTexelStream(half ? static_cast<const void*>(m.halfScales.data()) : m.scales.data(), m.blocks, half);
    if (s.offsets)
        s.offsets->uploadTexelStream(half ? static_cast<const void*>(m.halfOffsets.data()) : m.offsets.data(), m.blocks,
                                     half);
    s.uploaded = true;
    // The staging texture goes once every matrix that arrives in blocks has.
    if (std::none_of(slots_.begin(), slots_.end(), [](const auto& named) {
            const Slot& other = named.second;
            return other.blockRows > 0 && !other.quantizedHere && !other.uploaded;
        }))
        blockBytes_.reset();
}

void ModelWeights::decodeOnGpu(Slot& s, const BlockMatrix& m) {
    if (!programs_) fail("model weights: ", s.spec.name, " is decoded on the GPU, and no programs were given");
    // One texture stages every matrix, a few MB of its rows at a time: its layout, and so the
    // decoder's programs, stay the same whatever the matrix.
    constexpr int kTexelsPerRow = 1024, kRows = 2048;
    if (!blockBytes_)
        blockBytes_ =
            std::make_unique<Texture>(TensorLayout::make(kRows, 4 * kTexelsPerRow, limits_, "GGUF blocks"),
                                      TexelFormat::Bits, "GGUF blocks as stored", Texture::Allocation::Staging);
    const int chunk = int(std::min<std::int64_t>(m.channels, blockBytes_->bytes() / m.rowBytes / 4 * 4));
    if (chunk == 0)
        fail("tensor ", s.spec.name, " has rows of ", m.rowBytes, " bytes, more than a quarter of the ",
             blockBytes_->bytes(), " that the GPU decodes at once");
    BlockDecoder decoder(*programs_, *blockBytes_, *s.texture, m.type, m.channelsAreRows, m.rowBytes, m.outputs);
    for (int first = 0; first < m.channels; first += chunk) {
        const int end = std::min(m.channels, first + chunk);
        blockBytes_->uploadBytes(m.source + std::int64_t(first) * m.rowBytes,
                                 std::int64_t(std::max(0, std::min(end, m.outputs) - first)) * m.rowBytes);
        decoder.run(first, end);
    }
}

void ModelWeights::checkComplete(const std::string& label) const {
    std::string missing;
    int count = 0;
    for (const auto& [name, s] : slots_)
        if (!s.uploaded && ++count <= 5) missing += (missing.empty() ? "" : ", ") + name;
    if (count > 0)
        fail(label, ": ", count, " tensor(s) missing, e.g. ", missing,
             "; is this a complete GPT-2 checkpoint for its config.json?");
    checkGlError((label + ": uploading the weights").c_str());
}

const Texture& ModelWeights::operator[](const std::string& name) const {
    auto it = slots_.find(name);
    if (it == slots_.end()) fail("model weights: no texture ", name);
    return *it->second.texture;
}

WeightMatrix ModelWeights::matrix(const std::string& name) const {
    const Slot& s = slot(name);
    return {s.texture.get(), s.scales.get(), s.offsets.get(), s.blockRows / 4};
}

std::int64_t ModelWeights::bytes() const {
    std::int64_t total = 0;
    for (const auto& [name, s] : slots_)
        total += s.texture->bytes() + (s.scales ? s.scales->bytes() : 0) + (s.offsets ? s.offsets->bytes() : 0);
    return total;
}

}  // namespace gpt2
