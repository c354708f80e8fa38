#include "model/gguf_weight_file.h"

#include "format/gguf_gpt2.h"
#include "util/error.h"

namespace gpt2 {
namespace {

const MatrixSpec* specOf(const std::vector<MatrixSpec>& specs, const std::string& name) {
    for (const MatrixSpec& spec : specs)
        if (spec.name == name) return &spec;
    return nullptr;
}

// Whether the engine reads this matrix in blocks: the matmul weights and the token embedding.
bool keptInBlocks(const MatrixSpec& spec) { return spec.rows > 1 && spec.name != "wpe.weight"; }

}  // namespace

GgufWeightFile::GgufWeightFile(GgufHeader header)
    : header_(std::move(header)), config_(ggufGpt2Config(header_)), specs_(engineMatrices(config_)) {
    for (const GgufTensor& t : header_.tensors) {
        const MatrixSpec* spec = specOf(specs_, huggingFaceName(t.name));
        if (!spec) continue;
        wanted_.push_back(&t);
        const GgmlTypeInfo& info = *ggmlTypeInfo(std::uint32_t(t.type));
        if (isQuantized(t.type) && keptInBlocks(*spec))
            blocks_[spec->name] = BlockFormat{info.codeBits, info.scaleValues, info.offsets, info.halfParams};
    }
    for (const MatrixSpec& spec : specs_)
        if (!header_.tensor(ggufName(spec.name)))
            fail(header_.label, ": tensor ", ggufName(spec.name), " (Hugging Face ", spec.name,
                 ") is missing; is this a complete GPT-2 GGUF file?");
}

void GgufWeightFile::upload(ModelWeights& weights, const GgufTensor& t, const std::uint8_t* bytes) const {
    const std::string name = huggingFaceName(t.name);
    const MatrixSpec* spec = specOf(specs_, name);
    if (!spec) fail(header_.label, ": tensor ", t.name, " is not a GPT-2 weight");
    const std::vector<std::int64_t> expected = ggufDims(name, spec->sourceShape);
    if (t.dims != expected)
        fail(header_.label, ": tensor ", t.name, " has dimensions ", shapeText(t.dims), ", expected ",
             shapeText(expected), " from the gpt2.* metadata");
    const std::int64_t count = t.elementCount(), K = t.dims[0];
    if (blocks_.count(name)) {
        return weights.uploadBlocks(name, blockMatrix(config_, *spec, t.type, bytes, K, count / K));
    }
    // Floats go up as they are stored, transposed on the GPU where the file keeps a Conv1D weight's
    // [out, in] (Hugging Face's is [in, out]).
    if (!isQuantized(t.type)) {
        const DType dtype = t.type == GgmlType::F16 ? DType::F16 : t.type == GgmlType::BF16 ? DType::BF16 : DType::F32;
        return weights.upload(name, spec->sourceShape, dtype, bytes, storedTransposed(name));
    }
    // The few small quantized tensors the engine reads as floats go the same way, as fp32.
    std::vector<float> values(static_cast<std::size_t>(count));
    const AffineBlocks b = decodeAffineBlocks(t.type, bytes, count);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const std::size_t block = i / std::size_t(b.scaleValues);
        values[i] = float(b.codes[i]) * b.scales[block] + (b.offsets.empty() ? 0.0f : b.offsets[block]);
    }
    weights.upload(name, spec->sourceShape, DType::F32, reinterpret_cast<const std::uint8_t*>(values.data()),
                   storedTransposed(name));
}

}  // namespace gpt2
