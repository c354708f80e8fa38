#include "model/weight_packing.h"

#include <algorithm>

#include "util/error.h"

namespace gpt2 {
namespace {

int texels(int n) { return (n + 3) / 4; }

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Maps a column of Q, K or V in Hugging Face order (part * n_embd + head * head_dim + d) to the
// padded engine column (part * headsCols + head * paddedHeadDim + d).
int paddedHeadColumn(int hfColumn, const ModelConfig& c, const EngineDims& d) {
    const int part = hfColumn / c.embedDim, inPart = hfColumn % c.embedDim;
    const int head = inPart / c.headDim(), within = inPart % c.headDim();
    return part * d.headsTexels * 4 + head * d.headTexels * 4 + within;
}

}  // namespace

EngineDims engineDims(const ModelConfig& c) {
    EngineDims d;
    d.embedTexels = texels(c.embedDim);
    d.innerTexels = texels(c.innerDim);
    d.headTexels = texels(c.headDim());
    d.headsTexels = c.heads * d.headTexels;
    d.vocabRows = (c.vocabSize + 3) / 4 * 4;
    return d;
}

std::vector<MatrixSpec> engineMatrices(const ModelConfig& c) {
    const EngineDims d = engineDims(c);
    const int embedRows = d.embedTexels * 4, innerRows = d.innerTexels * 4, headsCols = d.headsTexels * 4;
    std::vector<MatrixSpec> specs = {{"wte.weight", d.vocabRows, c.embedDim}, {"wpe.weight", c.contextLength, c.embedDim}};
    for (int l = 0; l < c.layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        specs.push_back({h + "ln_1.weight", 1, c.embedDim});
        specs.push_back({h + "ln_1.bias", 1, c.embedDim});
        specs.push_back({h + "attn.c_attn.weight", embedRows, 3 * headsCols});
        specs.push_back({h + "attn.c_attn.bias", 1, 3 * headsCols});
        specs.push_back({h + "attn.c_proj.weight", headsCols, c.embedDim});
        specs.push_back({h + "attn.c_proj.bias", 1, c.embedDim});
        specs.push_back({h + "ln_2.weight", 1, c.embedDim});
        specs.push_back({h + "ln_2.bias", 1, c.embedDim});
        specs.push_back({h + "mlp.c_fc.weight", embedRows, c.innerDim});
        specs.push_back({h + "mlp.c_fc.bias", 1, c.innerDim});
        specs.push_back({h + "mlp.c_proj.weight", innerRows, c.embedDim});
        specs.push_back({h + "mlp.c_proj.bias", 1, c.embedDim});
    }
    specs.push_back({"ln_f.weight", 1, c.embedDim});
    specs.push_back({"ln_f.bias", 1, c.embedDim});
    if (!c.tieWordEmbeddings) specs.push_back({"lm_head.weight", d.vocabRows, c.embedDim});
    return specs;
}

std::vector<float> packMatrix(const TensorSource& source, const MatrixSpec& spec) {
    const ModelConfig& c = source.config();
    const EngineDims d = engineDims(c);
    const std::int64_t C = c.embedDim;
    std::vector<float> out(std::size_t(spec.rows) * std::size_t(spec.cols), 0.0f);
    auto copyRows = [&](const std::vector<float>& in, std::int64_t rows, std::int64_t cols) {
        std::copy(in.begin(), in.begin() + rows * cols, out.begin());
    };

    if (spec.name == "wte.weight" || spec.name == "lm_head.weight") {
        copyRows(source.read(spec.name, {c.vocabSize, C}), c.vocabSize, C);
    } else if (spec.name == "wpe.weight") {
        copyRows(source.read(spec.name, {c.contextLength, C}), c.contextLength, C);
    } else if (endsWith(spec.name, "attn.c_attn.weight")) {
        const auto in = source.read(spec.name, {C, 3 * C});
        for (std::int64_t r = 0; r < C; ++r)
            for (int col = 0; col < 3 * C; ++col) out[r * spec.cols + paddedHeadColumn(col, c, d)] = in[r * 3 * C + col];
    } else if (endsWith(spec.name, "attn.c_attn.bias")) {
        const auto in = source.read(spec.name, {3 * C});
        for (int col = 0; col < 3 * C; ++col) out[paddedHeadColumn(col, c, d)] = in[col];
    } else if (endsWith(spec.name, "attn.c_proj.weight")) {
        const auto in = source.read(spec.name, {C, C});
        for (std::int64_t r = 0; r < C; ++r) {
            const std::int64_t paddedRow = paddedHeadColumn(int(r), c, d);
            std::copy(in.begin() + r * C, in.begin() + (r + 1) * C, out.begin() + paddedRow * C);
        }
    } else if (endsWith(spec.name, "mlp.c_fc.weight")) {
        copyRows(source.read(spec.name, {C, c.innerDim}), C, c.innerDim);
    } else if (endsWith(spec.name, "mlp.c_proj.weight")) {
        copyRows(source.read(spec.name, {c.innerDim, C}), c.innerDim, C);
    } else if (spec.rows == 1) {
        copyRows(source.read(spec.name, {spec.cols}), 1, spec.cols);
    } else {
        fail("packMatrix: no packing rule for ", spec.name);
    }
    return out;
}

}  // namespace gpt2
