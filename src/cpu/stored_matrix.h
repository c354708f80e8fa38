#pragma once
// A weight matrix on the CPU, kept in memory as its file stores it (F32, F16, BF16 or a GGUF block
// type: 4-bit blocks stay 4-bit) and dequantized inside the products that read it.
#include <cstdint>
#include <vector>

#include "format/model_file.h"

namespace gpt2 {

class StoredMatrix {
public:
    StoredMatrix() = default;
    // `tensor`'s bytes (end - begin of them); `outputsAreRows`: its Hugging Face shape is [outputs,
    // inputs] (the embedding and lm_head, outputChannelsAreRows), else [inputs, outputs] (Conv1D). A
    // stored row is either one output's inputs (those, GGUF's Conv1D weights stored transposed, and
    // every block type, whose blocks run along the inputs) or one input's outputs (a checkpoint's
    // Conv1D).
    StoredMatrix(const StoredTensor& tensor, std::vector<std::uint8_t> bytes, bool outputsAreRows);

    int inputs() const { return inputs_; }
    int outputs() const { return outputs_; }
    std::int64_t bytes() const { return std::int64_t(bytes_.size()); }
    // y[r][n] = sum_k x[r][k] W[k][n] (+ y[r][n] when `accumulate`) for `rows` rows of x (inputs()
    // apart) and y (outputs() apart): each weight is decoded once for all the rows, the outputs
    // split over the CPU's cores.
    void product(const float* x, float* y, int rows = 1, bool accumulate = false) const;
    // Stored row `r` as floats (a token's embedding, for a matrix whose rows are outputs).
    void row(int r, float* out) const;

private:
    // Outputs a prompt's product takes at a time: a 64-byte cache line of fp32 from each stored row of
    // a matrix stored by inputs, or 16 stored rows as floats (48 KB for GPT-2 124M's 768 inputs).
    static constexpr int kPanel = 16;
    // `count` stored rows from `first` as floats, one after another: in place for F32, else decoded
    // into `scratch`.
    const float* floatRows(int first, int count, float* scratch) const;
    // A prompt's product(), by the layout of the stored rows.
    void productByOutputs(const float* x, float* y, int rows) const;
    void productByInputs(const float* x, float* y, int rows) const;

    GgmlType type_ = GgmlType::F32;
    std::vector<std::uint8_t> bytes_;
    int inputs_ = 0, outputs_ = 0;
    bool rowsAreOutputs_ = false;
    std::int64_t rowBytes_ = 0;  // of a stored row
};

}  // namespace gpt2
