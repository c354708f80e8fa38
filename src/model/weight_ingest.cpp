#include "model/weight_ingest.h"

#include "util/error.h"

namespace gpt2 {
namespace {

const MatrixSpec* specOf(const std::vector<MatrixSpec>& specs, const std::string& name) {
    for (const MatrixSpec& spec : specs)
        if (spec.name == name) return &spec;
    return nullptr;
}

}  // namespace

BlockFormats blockFormats(const ModelConfig& config, const std::vector<const ModelFileHeader*>& files) {
    const std::vector<MatrixSpec> specs = engineMatrices(config);
    BlockFormats blocks;
    for (const ModelFileHeader* file : files)
        for (const StoredTensor& t : file->tensors) {
            const MatrixSpec* spec = specOf(specs, t.name);
            const GgmlTypeInfo* info = ggmlTypeInfo(std::uint32_t(t.type));
            if (spec && info && info->blockValues > 1 && keptInBlocks(*spec))
                blocks[spec->name] = BlockFormat{info->codeBits, info->scaleValues, info->offsets, info->halfParams};
        }
    return blocks;
}

std::vector<const StoredTensor*> wantedTensors(const ModelWeights& weights, const ModelFileHeader& file) {
    std::vector<const StoredTensor*> wanted;
    for (const StoredTensor& t : file.tensors)
        if (weights.wants(t.name)) wanted.push_back(&t);
    return wanted;
}

void ingest(ModelWeights& weights, const ModelFileHeader& file, const StoredTensor& t, const std::uint8_t* bytes) {
    if (!weights.wants(t.name)) fail(file.label, ": tensor ", t.storedName, " is not a GPT-2 weight");
    const MatrixSpec& spec = weights.spec(t.name);
    checkStoredTensor(file, t, spec);
    std::int64_t count = 1;
    for (const std::int64_t dim : t.shape) count *= dim;
    if (weights.arrivesInBlocks(t.name)) {
        // Blocks run along a row of the stored tensor, which holds one output channel's inputs.
        const std::int64_t K = t.transposed ? t.shape.front() : t.shape.back();
        return weights.uploadBlocks(t.name, blockMatrix(weights.config(), spec, t.type, bytes, K, count / K));
    }
    if (!isQuantized(t.type)) {
        const DType dtype = t.type == GgmlType::F16 ? DType::F16 : t.type == GgmlType::BF16 ? DType::BF16 : DType::F32;
        return weights.upload(t.name, t.shape, dtype, bytes, t.transposed);
    }
    // The few small quantized tensors the engine reads as floats go the same way, as fp32.
    std::vector<float> values(static_cast<std::size_t>(count));
    decodeValues(t.type, bytes, count, values.data());
    weights.upload(t.name, t.shape, DType::F32, reinterpret_cast<const std::uint8_t*>(values.data()), t.transposed);
}

}  // namespace gpt2
