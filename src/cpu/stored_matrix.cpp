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

const float* StoredMatrix::floatRows(int first, int count, float* scratch) const {
    // F32 rows are read where they are stored: a copy would read every weight twice.
    if (type_ == GgmlType::F32) return reinterpret_cast<const float*>(bytes_.data() + first * rowBytes_);
    const int width = rowsAreOutputs_ ? inputs_ : outputs_;
    for (int i = 0; i < count; ++i) row(first + i, scratch + std::size_t(i) * std::size_t(width));
    return scratch;
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
    if (!rowsAreOutputs_ && rows < 4) {
        // y[r] += x[r][k] row k, each thread over its own columns: a stored row is read once, in order.
        const std::size_t valueBytes = std::size_t(rowBytes_) / out;
        cpu::parallelFor(outputs_, 64, [&](int begin, int end) {
            const int width = end - begin;
            std::vector<float> scratch(static_cast<std::size_t>(width));
            for (int k = 0; k < inputs_; ++k) {
                const std::uint8_t* stored = bytes_.data() + k * rowBytes_ + std::size_t(begin) * valueBytes;
                const float* w = scratch.data();
                if (type_ == GgmlType::F32)
                    w = reinterpret_cast<const float*>(stored);
                else
                    decodeFloats(type_, stored, width, scratch.data());
                for (int r = 0; r < rows; ++r)
                    cpu::addScaled(y + std::size_t(r) * out + std::size_t(begin),
                                   x[std::size_t(r) * in + std::size_t(k)], w, width);
            }
        });
        return;
    }
    if (rowsAreOutputs_)
        productByOutputs(x, y, rows);
    else
        productByInputs(x, y, rows);
}

void StoredMatrix::productByOutputs(const float* x, float* y, int rows) const {
    // y[r][n] += dot(stored row n, x[r]), panels of 16 rows as floats: each pair of x's rows meets the
    // whole panel while it is in cache, 4 outputs by 2 rows at a time from registers.
    const std::size_t in = std::size_t(inputs_), out = std::size_t(outputs_);
    constexpr int O = 4, R = 2;
    cpu::parallelFor(outputs_, kPanel, [&](int begin, int end) {
        std::vector<float> scratch(in * std::size_t(kPanel));
        float tile[O * R];
        for (int first = begin; first < end; first += kPanel) {
            const int count = std::min(kPanel, end - first);
            const float* panel = floatRows(first, count, scratch.data());
            int r = 0;
            for (; r + R <= rows; r += R) {
                int t = 0;
                for (; t + O <= count; t += O) {
                    cpu::dots<O, R>(panel + std::size_t(t) * in, x + std::size_t(r) * in, in, inputs_, tile);
                    for (int i = 0; i < R; ++i)
                        for (int o = 0; o < O; ++o)
                            y[std::size_t(r + i) * out + std::size_t(first + t + o)] += tile[i * O + o];
                }
                for (; t < count; ++t)
                    for (int i = 0; i < R; ++i)
                        y[std::size_t(r + i) * out + std::size_t(first + t)] +=
                            cpu::dot(panel + std::size_t(t) * in, x + std::size_t(r + i) * in, inputs_);
            }
            for (; r < rows; ++r)
                for (int t = 0; t < count; ++t)
                    y[std::size_t(r) * out + std::size_t(first + t)] +=
                        cpu::dot(panel + std::size_t(t) * in, x + std::size_t(r) * in, inputs_);
        }
    });
}

void StoredMatrix::productByInputs(const float* x, float* y, int rows) const {
    // y[r][first + j] += sum_k x[r][k] W[k][first + j] over columns of 16 outputs, each decoded to
    // floats once for all the rows; 8 outputs by 4 rows from registers, each output summed in the
    // order a decode step's addScaled() sums it (a prompt's logits equal those of its tokens decoded).
    const std::size_t in = std::size_t(inputs_), out = std::size_t(outputs_);
    const std::size_t valueBytes = std::size_t(rowBytes_) / out;
    constexpr int R = 4, V = 2, W = 4 * V;
    cpu::parallelFor(outputs_, kPanel, [&](int begin, int end) {
        std::vector<float> scratch(in * std::size_t(kPanel));
        for (int first = begin; first < end; first += kPanel) {
            const int count = std::min(kPanel, end - first);
            // The column's rows one after another (a copy for F32 too: strided reads of the stored
            // rows, a cache line each, measured slower than reading the copy).
            for (int k = 0; k < inputs_; ++k)
                decodeFloats(type_, bytes_.data() + k * rowBytes_ + std::size_t(first) * valueBytes, count,
                             scratch.data() + std::size_t(k) * kPanel);
            const float* column = scratch.data();
            for (int t = 0; t + W <= count; t += W) {
                float* ys = y + std::size_t(first + t);
                int r = 0;
                for (; r + R <= rows; r += R)
                    cpu::axpys<R, V>(column + t, kPanel, x + std::size_t(r) * in, in, inputs_,
                                     ys + std::size_t(r) * out, out);
                for (; r < rows; ++r)
                    cpu::axpys<1, V>(column + t, kPanel, x + std::size_t(r) * in, in, inputs_,
                                     ys + std::size_t(r) * out, out);
            }
            for (int t = count / W * W; t < count; ++t)
                for (int r = 0; r < rows; ++r) {
                    float& sum = y[std::size_t(r) * out + std::size_t(first + t)];
                    for (int k = 0; k < inputs_; ++k)
                        sum +=
                            x[std::size_t(r) * in + std::size_t(k)] * column[std::size_t(k) * kPanel + std::size_t(t)];
                }
        }
    });
}

}  // namespace gpt2
