#include "cpu/stored_matrix.h"

#include "cpu/vector_math.h"
#include "util/error.h"

namespace gpt2 {

StoredMatrix::StoredMatrix(const StoredTensor& tensor, std::vector<std::uint8_t> bytes)
    : type_(tensor.type), bytes_(std::move(bytes)) {
    if (tensor.shape.size() != 2) fail("StoredMatrix: tensor ", tensor.storedName, " is not a matrix");
    const GgmlTypeInfo* info = ggmlTypeInfo(std::uint32_t(tensor.type));
    if (!info) fail("StoredMatrix: tensor ", tensor.storedName, " is ", ggmlTypeName(std::uint32_t(tensor.type)));
    // The embedding and lm_head are [vocab, n_embd], rows of outputs; a Conv1D weight is [in, out],
    // stored so by a checkpoint and transposed by GGUF.
    const bool embedding = tensor.name == "wte.weight" || tensor.name == "lm_head.weight";
    rowsAreOutputs_ = embedding || tensor.transposed;
    inputs_ = int(embedding ? tensor.shape[1] : tensor.shape[0]);
    outputs_ = int(embedding ? tensor.shape[0] : tensor.shape[1]);
    const int rowValues = rowsAreOutputs_ ? inputs_ : outputs_;
    rowBytes_ = std::int64_t(rowValues) / info->blockValues * info->blockBytes;
    if (info->blockValues > 1 && !rowsAreOutputs_)
        fail("StoredMatrix: tensor ", tensor.storedName, " holds blocks across its outputs");
    if (std::int64_t(bytes_.size()) != rowBytes_ * (rowsAreOutputs_ ? outputs_ : inputs_))
        fail("StoredMatrix: tensor ", tensor.storedName, " has ", bytes_.size(), " bytes");
}

void StoredMatrix::row(int r, float* out) const {
    decodeValues(type_, bytes_.data() + r * rowBytes_, rowsAreOutputs_ ? inputs_ : outputs_, out);
}

void StoredMatrix::product(const float* x, float* y, bool accumulate) const {
    if (!accumulate) std::fill(y, y + outputs_, 0.0f);
    if (!rowsAreOutputs_) {
        // y = sum_k x[k] row_k
        std::vector<float> row(type_ == GgmlType::F32 ? 0 : std::size_t(outputs_));
        for (int k = 0; k < inputs_; ++k) {
            const float* values = reinterpret_cast<const float*>(bytes_.data() + k * rowBytes_);
            if (type_ != GgmlType::F32) {
                decodeFloats(type_, bytes_.data() + k * rowBytes_, outputs_, row.data());
                values = row.data();
            }
            cpu::addScaled(y, x[k], values, outputs_);
        }
        return;
    }
    if (!isQuantized(type_)) {
        std::vector<float> row(type_ == GgmlType::F32 ? 0 : std::size_t(inputs_));
        for (int n = 0; n < outputs_; ++n) {
            const float* values = reinterpret_cast<const float*>(bytes_.data() + n * rowBytes_);
            if (type_ != GgmlType::F32) {
                decodeFloats(type_, bytes_.data() + n * rowBytes_, inputs_, row.data());
                values = row.data();
            }
            y[n] += cpu::dot(values, x, inputs_);
        }
        return;
    }
    // Blocks: each block's codes times x, then its scale once, plus its offset times the block's sum of x.
    const GgmlTypeInfo& info = *ggmlTypeInfo(std::uint32_t(type_));
    const int perScale = info.scaleValues, blocks = inputs_ / perScale;
    const std::size_t K = std::size_t(inputs_), B = std::size_t(blocks);
    std::vector<float> xSums(B, 0.0f), codes(K), scales(B), offsets(B, 0.0f);
    std::vector<std::int8_t> rawCodes(K);
    for (int b = 0; b < blocks; ++b)
        for (int i = 0; i < perScale; ++i) xSums[std::size_t(b)] += x[b * perScale + i];
    for (int n = 0; n < outputs_; ++n) {
        const std::uint8_t* bytes = bytes_.data() + n * rowBytes_;
        decodeCodes(type_, bytes, inputs_, rawCodes.data());
        decodeScales(type_, bytes, inputs_, scales.data(), info.offsets ? offsets.data() : nullptr, 1);
        for (int i = 0; i < inputs_; ++i) codes[std::size_t(i)] = rawCodes[std::size_t(i)];
        float sum = 0.0f;
        for (int b = 0; b < blocks; ++b)
            sum += scales[std::size_t(b)] * cpu::dot(codes.data() + b * perScale, x + b * perScale, perScale) +
                   offsets[std::size_t(b)] * xSums[std::size_t(b)];
        y[n] += sum;
    }
}

}  // namespace gpt2
