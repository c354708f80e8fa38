#include "model/model_weights.h"

#include <cmath>
#include <cstring>

#include "util/error.h"
#include "util/half.h"

namespace gpt2 {
namespace {

std::string withoutPrefix(const std::string& name) {
    const std::string prefix = "transformer.";
    return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

}  // namespace

ModelWeights::ModelWeights(const ModelConfig& config, TexelFormat format, const TextureLimits& limits,
                           Texture::Allocation when)
    : config_(config) {
    for (const MatrixSpec& spec : engineMatrices(config)) {
        // LayerNorm parameters and biases stay fp32: they are tiny and fp16 would add error for nothing.
        TexelFormat texelFormat = spec.rows == 1 ? TexelFormat::Float32 : format;
        if (texelFormat == TexelFormat::Int8Quads && !quantizedWithInt8(spec)) texelFormat = TexelFormat::Float16;
        const int perTexel = rowsPerTexel(texelFormat);
        const int storedRows = (spec.rows + perTexel - 1) / perTexel;
        Slot slot{spec,
                  std::make_unique<Texture>(TensorLayout::make(storedRows, spec.cols, limits, spec.name.c_str()),
                                            texelFormat, spec.name, when),
                  nullptr,
                  false,
                  {}};
        if (texelFormat == TexelFormat::Int8Quads) {
            const std::string name = spec.name + " scales";
            slot.scales = std::make_unique<Texture>(TensorLayout::make(1, int8Channels(spec), limits, name.c_str()),
                                                    TexelFormat::Float32, name, when);
        }
        slots_[spec.name] = std::move(slot);
    }
}

void ModelWeights::allocate() {
    for (auto& [name, s] : slots_) {
        s.texture->allocate();
        if (s.scales) s.scales->allocate();
    }
}

bool ModelWeights::wants(const std::string& name) const { return slots_.count(withoutPrefix(name)) != 0; }

ModelWeights::Slot& ModelWeights::slot(const std::string& name) {
    auto it = slots_.find(withoutPrefix(name));
    if (it == slots_.end()) fail("model weights: ", name, " is not a GPT-2 weight");
    return it->second;
}

void ModelWeights::upload(const std::string& name, const std::vector<std::int64_t>& shape,
                          const std::vector<float>& values) {
    Slot& s = slot(name);
    if (shape != s.spec.sourceShape)
        fail("tensor ", name, " has shape ", shapeText(shape), ", expected ", shapeText(s.spec.sourceShape),
             " from config.json");
    uploadMatrix(s, packMatrix(config_, s.spec, values), s.spec.cols);
}

void ModelWeights::uploadMatrix(Slot& s, const std::vector<float>& matrix, int cols) {
    if (s.texture->format() == TexelFormat::Int8Quads) {
        const Int8Matrix q = quantizeInt8(matrix, s.spec.rows, cols, outputChannelsAreRows(s.spec));
        s.texture->uploadInt8(q.values.data());
        s.scales->uploadRows(0, 1, q.scales.data());
    } else {
        s.texture->uploadRows(0, s.spec.rows, matrix.data());
    }
    s.uploaded = true;
}

void ModelWeights::uploadPacked(const TensorInfo& info, const std::uint8_t* bytes, const std::string& label) {
    const std::string suffix = scalesTensorName("");
    const bool isScales = info.name.size() > suffix.size() &&
                          info.name.compare(info.name.size() - suffix.size(), suffix.size(), suffix) == 0;
    const std::string matrix = isScales ? info.name.substr(0, info.name.size() - suffix.size()) : info.name;
    auto it = slots_.find(matrix);
    if (it == slots_.end()) fail(label, ": tensor ", info.name, " is not an engine matrix of this config");
    Slot& s = it->second;
    if (isScales) return keepScales(s, info, bytes, label);
    if (info.dtype == DType::BF16)
        fail(label, ": packed tensor ", info.name, " is BF16; packed files hold F32, F16 or I8");
    const std::vector<std::int64_t> shape = packedShape(s.spec, info.dtype);
    if (info.shape != shape)
        fail(label, ": packed tensor ", info.name, " has shape ", shapeText(info.shape), ", expected ",
             shapeText(shape));
    const int paddedCols = int(shape[1]);
    if (info.dtype == DType::I8)
        return uploadPackedInt8(s, reinterpret_cast<const std::int8_t*>(bytes), paddedCols, label);
    if (!s.pendingScales.empty())
        fail(label, ": tensor ", info.name, " is ", dtypeName(info.dtype),
             " but int8 scales came before it; only I8 matrices have scales");
    const bool half = info.dtype == DType::F16;
    auto valueAt = [&](std::int64_t i) {
        if (half) return halfToFloat(std::uint16_t(bytes[2 * i] | bytes[2 * i + 1] << 8));
        float value;
        std::memcpy(&value, bytes + 4 * i, 4);
        return value;
    };
    // int8 textures are quantized from the values; other formats take the stream as it is.
    const bool quantize = s.texture->format() == TexelFormat::Int8Quads;
    const std::int64_t n = info.elementCount();
    std::vector<float> values(quantize ? static_cast<std::size_t>(n) : 0);
    for (std::int64_t i = 0; i < n; ++i) {
        const float value = valueAt(i);
        if (!std::isfinite(value))
            fail(label, ": tensor ", info.name, " holds a non-finite value at element ", i, "; the file is corrupt");
        if (quantize) values[std::size_t(i)] = value;
    }
    if (quantize) return uploadMatrix(s, values, paddedCols);
    s.texture->uploadTexelStream(bytes, s.spec.rows, half);
    s.uploaded = true;
}

void ModelWeights::keepScales(Slot& s, const TensorInfo& info, const std::uint8_t* bytes, const std::string& label) {
    const std::vector<std::int64_t> shape = {int8Channels(s.spec)};
    if (info.dtype != DType::F32 || info.shape != shape)
        fail(label, ": tensor ", info.name, " is ", dtypeName(info.dtype), " ", shapeText(info.shape),
             ", expected F32 ", shapeText(shape));
    s.pendingScales.resize(std::size_t(shape[0]));
    std::memcpy(s.pendingScales.data(), bytes, s.pendingScales.size() * 4);
    for (std::size_t i = 0; i < s.pendingScales.size(); ++i)
        if (!std::isfinite(s.pendingScales[i]) || s.pendingScales[i] < 0)
            fail(label, ": tensor ", info.name, " holds ", s.pendingScales[i], " at element ", i,
                 "; scales are finite and >= 0, the file is corrupt");
}

void ModelWeights::uploadPackedInt8(Slot& s, const std::int8_t* values, int paddedCols, const std::string& label) {
    if (s.pendingScales.empty())
        fail(label, ": int8 tensor ", s.spec.name, " arrived before its scales ", scalesTensorName(s.spec.name),
             "; the scales come first in a packed file");
    if (s.texture->format() == TexelFormat::Int8Quads) {
        s.texture->uploadInt8(values);
        s.scales->uploadRows(0, 1, s.pendingScales.data());
    } else {
        const auto matrix =
            dequantizeInt8(values, s.pendingScales.data(), s.spec.rows, paddedCols, outputChannelsAreRows(s.spec));
        s.texture->uploadTexelStream(matrix.data(), s.spec.rows, false);
    }
    s.pendingScales = {};
    s.uploaded = true;
}

void ModelWeights::uploadAll(const TensorSource& source) {
    for (auto& [name, s] : slots_) upload(name, s.spec.sourceShape, source.read(name, s.spec.sourceShape));
}

void ModelWeights::checkComplete(const std::string& label) const {
    std::string missing;
    int count = 0;
    for (const auto& [name, s] : slots_)
        if (!s.uploaded && ++count <= 5) missing += (missing.empty() ? "" : ", ") + name;
    if (count > 0)
        fail(label, ": ", count, " tensor(s) missing, e.g. ", missing,
             "; is this a complete GPT-2 checkpoint for its config.json?");
}

const Texture& ModelWeights::operator[](const std::string& name) const {
    auto it = slots_.find(name);
    if (it == slots_.end()) fail("model weights: no texture ", name);
    return *it->second.texture;
}

const Texture* ModelWeights::scales(const std::string& name) const {
    auto it = slots_.find(name);
    if (it == slots_.end()) fail("model weights: no texture ", name);
    return it->second.scales.get();
}

std::int64_t ModelWeights::bytes() const {
    std::int64_t total = 0;
    for (const auto& [name, s] : slots_) total += s.texture->bytes() + (s.scales ? s.scales->bytes() : 0);
    return total;
}

}  // namespace gpt2
