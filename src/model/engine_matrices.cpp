#include "model/engine_matrices.h"

#include <algorithm>
#include <cmath>
#include <cstring>

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
    const std::int64_t C = c.embedDim, I = c.innerDim;
    const int embedRows = d.embedTexels * 4, innerRows = d.innerTexels * 4, headsCols = d.headsTexels * 4;
    std::vector<MatrixSpec> specs = {{"wte.weight", d.vocabRows, c.embedDim, {c.vocabSize, C}},
                                     {"wpe.weight", c.contextLength, c.embedDim, {c.contextLength, C}}};
    for (int l = 0; l < c.layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        specs.push_back({h + "ln_1.weight", 1, c.embedDim, {C}});
        specs.push_back({h + "ln_1.bias", 1, c.embedDim, {C}});
        specs.push_back({h + "attn.c_attn.weight", embedRows, 3 * headsCols, {C, 3 * C}});
        specs.push_back({h + "attn.c_attn.bias", 1, 3 * headsCols, {3 * C}});
        specs.push_back({h + "attn.c_proj.weight", headsCols, c.embedDim, {C, C}});
        specs.push_back({h + "attn.c_proj.bias", 1, c.embedDim, {C}});
        specs.push_back({h + "ln_2.weight", 1, c.embedDim, {C}});
        specs.push_back({h + "ln_2.bias", 1, c.embedDim, {C}});
        specs.push_back({h + "mlp.c_fc.weight", embedRows, c.innerDim, {C, I}});
        specs.push_back({h + "mlp.c_fc.bias", 1, c.innerDim, {I}});
        specs.push_back({h + "mlp.c_proj.weight", innerRows, c.embedDim, {I, C}});
        specs.push_back({h + "mlp.c_proj.bias", 1, c.embedDim, {C}});
    }
    specs.push_back({"ln_f.weight", 1, c.embedDim, {C}});
    specs.push_back({"ln_f.bias", 1, c.embedDim, {C}});
    if (!c.tieWordEmbeddings) specs.push_back({"lm_head.weight", d.vocabRows, c.embedDim, {c.vocabSize, C}});
    return specs;
}

void failNonFinite(const MatrixSpec& spec, float value, std::int64_t at) {
    fail("tensor ", spec.name, " holds a non-finite value (", value, ") at element ", at,
         "; the checkpoint is corrupt");
}

bool headsPadded(const ModelConfig& c, const MatrixSpec& spec) {
    const bool attention = endsWith(spec.name, "attn.c_attn.weight") || endsWith(spec.name, "attn.c_attn.bias") ||
                           endsWith(spec.name, "attn.c_proj.weight");
    return attention && engineDims(c).headsTexels * 4 != c.embedDim;
}

bool packedInPlace(const ModelConfig& c, const MatrixSpec& spec) {
    return spec.cols % 4 == 0 && spec.sourceShape.back() == spec.cols && !headsPadded(c, spec);
}

std::vector<float> packMatrix(const ModelConfig& c, const MatrixSpec& spec, const std::vector<float>& in) {
    const EngineDims d = engineDims(c);
    const std::int64_t C = c.embedDim;
    std::int64_t expected = 1;
    for (auto dim : spec.sourceShape) expected *= dim;
    if (std::int64_t(in.size()) != expected)
        fail("packMatrix: ", spec.name, " has ", in.size(), " values, expected ", expected);
    for (std::size_t i = 0; i < in.size(); ++i)
        if (!std::isfinite(in[i])) failNonFinite(spec, in[i], std::int64_t(i));
    std::vector<float> out(std::size_t(spec.rows) * std::size_t(spec.cols), 0.0f);

    if (endsWith(spec.name, "attn.c_attn.weight")) {
        for (std::int64_t r = 0; r < C; ++r)
            for (int col = 0; col < 3 * C; ++col)
                out[r * spec.cols + paddedHeadColumn(col, c, d)] = in[r * 3 * C + col];
    } else if (endsWith(spec.name, "attn.c_attn.bias")) {
        for (int col = 0; col < 3 * C; ++col) out[paddedHeadColumn(col, c, d)] = in[col];
    } else if (endsWith(spec.name, "attn.c_proj.weight")) {
        for (std::int64_t r = 0; r < C; ++r)
            std::copy(in.begin() + r * C, in.begin() + (r + 1) * C,
                      out.begin() + std::int64_t(paddedHeadColumn(int(r), c, d)) * C);
    } else {
        // Every other matrix keeps its values in place; only zero rows are appended.
        std::copy(in.begin(), in.end(), out.begin());
    }
    return out;
}

bool outputChannelsAreRows(const MatrixSpec& spec) {
    return spec.name == "wte.weight" || spec.name == "lm_head.weight";
}

bool keptInBlocks(const MatrixSpec& spec) { return spec.rows > 1 && spec.name != "wpe.weight"; }

void checkStoredTensor(const ModelFileHeader& file, const StoredTensor& t, const MatrixSpec& spec) {
    if (t.shape != spec.sourceShape)
        fail(file.label, ": tensor ", t.storedName, " has shape ", shapeText(t.shape), ", expected ",
             shapeText(spec.sourceShape), " from ", file.shapesFrom);
    if (t.type == GgmlType::I8) refuseIntegerTensor(file.label, t.storedName);
}

}  // namespace gpt2
