#include "cpu/stored_matrix.h"

#include <algorithm>

#include "cpu/thread_pool.h"
#include "cpu/vector_math.h"
#include "format/ggml_blocks.h"
#include "util/error.h"

namespace gpt2 {

StoredMatrix::StoredMatrix(const StoredTensor& tensor, std::vector<std::uint8_t> bytes, bool outputsAreRows)
    : type_(tensor.type), bytes_(std::move(bytes)) {
    if (tensor.shape.size() != 2) fail("StoredMatrix: tensor ", tensor.storedName, " is not a matrix");
    const GgmlTypeInfo* info = ggmlTypeInfo(std::uint32_t(tensor.type));
    if (!info) fail("StoredMatrix: tensor ", tensor.storedName, " is ", ggmlTypeName(std::uint32_t(tensor.type)));
    rowsAreOutputs_ = outputsAreRows || tensor.transposed;
    inputs_ = int(outputsAreRows ? tensor.shape[1] : tensor.shape[0]);
    outputs_ = int(outputsAreRows ? tensor.shape[0] : tensor.shape[1]);
    const int rowValues = rowsAreOutputs_ ? inputs_ : outputs_;
    rowBytes_ = std::int64_t(rowValues) / info->blockValues * info->blockBytes;
    if (info->blockValues > 1 && !rowsAreOutputs_)
        fail("StoredMatrix: tensor ", tensor.storedName, " holds blocks across its outputs");
    if (std::int64_t(bytes_.size()) != rowBytes_ * (rowsAreOutputs_ ? outputs_ : inputs_))
        fail("StoredMatrix: tensor ", tensor.storedName, " has ", bytes_.size(), " bytes");
}

void StoredMatrix::row(int r, float* out) const {
    const std::uint8_t* stored = bytes_.data() + r * rowBytes_;
    const int count = rowsAreOutputs_ ? inputs_ : outputs_;
    // Instantiated here, under the CPU kernels' flags (SIMD where the build has it).
    if (isQuantized(type_))
        decodeBlockFloats(type_, stored, count, out);
    else
        decodeFloats(type_, stored, count, out);
}

void StoredMatrix::product(const float* x, float* y, int rows, bool accumulate) const {
    const std::size_t in = std::size_t(inputs_), out = std::size_t(outputs_);
    if (!accumulate) std::fill(y, y + std::size_t(rows) * out, 0.0f);
    // A row or two of x (a decode step): the common 8- and 4-bit types read as stored, without
    // decoding their rows to floats first, where the target makes that cheaper.
    if (cpu::kBytesToFloatsAreCheap && rows < 4 && (type_ == GgmlType::Q8_0 || type_ == GgmlType::Q4_0)) {
        const auto dot = type_ == GgmlType::Q8_0 ? cpu::blockDot<cpu::Q8_0Block> : cpu::blockDot<cpu::Q4_0Block>;
        cpu::parallelFor(outputs_, 16, [&](int begin, int end) {
            for (int n = begin; n < end; ++n)
                for (int r = 0; r < rows; ++r)
                    y[std::size_t(r) * out + std::size_t(n)] +=
                        dot(bytes_.data() + n * rowBytes_, x + std::size_t(r) * in, inputs_);
        });
        return;
    }
    if (rowsAreOutputs_) {
        // y[r][n] = dot(row n, x[r]): rows decoded four at a time, each tile of 4 outputs by 2 rows of x
        // from registers.
        constexpr int O = 4, R = 2;
        cpu::parallelFor(outputs_, 16, [&](int begin, int end) {
            std::vector<float> w(in * O);
            float tile[O * R];
            for (int n = begin; n < end; n += O) {
                const int outs = std::min(O, end - n);
                for (int o = 0; o < outs; ++o) row(n + o, w.data() + std::size_t(o) * in);
                int r = 0;
                for (; outs == O && r + R <= rows; r += R) {
                    cpu::dots<O, R>(w.data(), x + std::size_t(r) * in, in, inputs_, tile);
                    for (int t = 0; t < R; ++t)
                        for (int o = 0; o < O; ++o) y[std::size_t(r + t) * out + std::size_t(n + o)] += tile[t * O + o];
                }
                for (; r < rows; ++r)
                    for (int o = 0; o < outs; ++o)
                        y[std::size_t(r) * out + std::size_t(n + o)] +=
                            cpu::dot(w.data() + std::size_t(o) * in, x + std::size_t(r) * in, inputs_);
            }
        });
        return;
    }
    // y[r] += x[r][k] row k, each thread over its own columns (floats only: blocks run along rows)
    const std::size_t valueBytes = std::size_t(rowBytes_) / out;
    cpu::parallelFor(outputs_, 64, [&](int begin, int end) {
        const int width = end - begin;
        std::vector<float> w(static_cast<std::size_t>(width));
        for (int k = 0; k < inputs_; ++k) {
            decodeFloats(type_, bytes_.data() + k * rowBytes_ + std::size_t(begin) * valueBytes, width, w.data());
            for (int r = 0; r < rows; ++r)
                cpu::addScaled(y + std::size_t(r) * out + std::size_t(begin), x[std::size_t(r) * in + std::size_t(k)],
                               w.data(), width);
        }
    });
}

}  // namespace gpt2
