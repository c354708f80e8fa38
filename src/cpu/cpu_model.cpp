#include "cpu/cpu_model.h"

#include <algorithm>
#include <cmath>

#include "cpu/vector_math.h"
#include "util/error.h"

namespace gpt2 {
namespace {

void layerNorm(const float* x, const std::vector<float>& gamma, const std::vector<float>& beta, float eps, int n,
               float* out) {
    float mean = 0.0f, variance = 0.0f;
    for (int i = 0; i < n; ++i) mean += x[i];
    mean /= float(n);
    for (int i = 0; i < n; ++i) variance += (x[i] - mean) * (x[i] - mean);
    const float inverse = 1.0f / std::sqrt(variance / float(n) + eps);
    for (int i = 0; i < n; ++i) out[i] = (x[i] - mean) * inverse * gamma[std::size_t(i)] + beta[std::size_t(i)];
}

float activate(float x, Activation kind) {
    switch (kind) {
        case Activation::GeluTanh:
            return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
        case Activation::GeluErf: return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
        case Activation::Relu: return std::max(x, 0.0f);
    }
    return x;
}

void addInto(std::vector<float>& y, const std::vector<float>& b) {
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += b[i];
}

}  // namespace

CpuModel::CpuModel(const ModelConfig& config) : config_(config), specs_(engineMatrices(config)) {
    const std::size_t cache = std::size_t(config.contextLength) * std::size_t(config.embedDim);
    keys_.assign(std::size_t(config.layers), std::vector<float>(cache));
    values_.assign(std::size_t(config.layers), std::vector<float>(cache));
}

CpuModel::CpuModel(const ModelOnDisk& model) : CpuModel(model.config) {
    for (const auto& file : model.files)
        for (const StoredTensor& tensor : file->header().tensors)
            if (wants(tensor.name)) ingest(file->header(), tensor, file->read(tensor));
    checkComplete(model.files.front()->header().label);
}

bool CpuModel::wants(const std::string& name) const {
    return std::any_of(specs_.begin(), specs_.end(), [&](const MatrixSpec& s) { return s.name == name; });
}

void CpuModel::ingest(const ModelFileHeader& file, const StoredTensor& tensor, std::vector<std::uint8_t> bytes) {
    const auto spec =
        std::find_if(specs_.begin(), specs_.end(), [&](const MatrixSpec& s) { return s.name == tensor.name; });
    if (spec == specs_.end()) fail(file.label, ": tensor ", tensor.storedName, " is not a GPT-2 weight");
    checkStoredTensor(file, tensor, *spec);
    if (spec->rows > 1 && spec->name != "wpe.weight") {
        matrices_[spec->name] = StoredMatrix(tensor, std::move(bytes));
        return;
    }
    // Vectors and the position embedding, as floats: small, and read whole.
    std::int64_t count = 1;
    for (const std::int64_t dim : tensor.shape) count *= dim;
    std::vector<float> values(static_cast<std::size_t>(count));
    decodeValues(tensor.type, bytes.data(), count, values.data());
    vectors_[spec->name] = std::move(values);
}

void CpuModel::checkComplete(const std::string& label) const {
    for (const MatrixSpec& spec : specs_)
        if (!matrices_.count(spec.name) && !vectors_.count(spec.name))
            fail(label, ": tensor ", spec.name, " is missing; is this a complete GPT-2 model?");
}

std::int64_t CpuModel::bytes() const {
    std::int64_t total = 0;
    for (const auto& [name, m] : matrices_) total += m.bytes();
    for (const auto& [name, v] : vectors_) total += std::int64_t(v.size() * sizeof(float));
    for (const auto* cache : {&keys_, &values_})
        for (const std::vector<float>& layer : *cache) total += std::int64_t(layer.size() * sizeof(float));
    return total;
}

const StoredMatrix& CpuModel::matrix(const std::string& name) const {
    const auto it = matrices_.find(name);
    if (it == matrices_.end()) fail("CPU model: weight ", name, " has not arrived");
    return it->second;
}

const std::vector<float>& CpuModel::vec(const std::string& name) const {
    const auto it = vectors_.find(name);
    if (it == vectors_.end()) fail("CPU model: weight ", name, " has not arrived");
    return it->second;
}

void CpuModel::checkPositions(const std::vector<int>& ids, int pos0) const {
    if (ids.empty()) fail("forward: no tokens to run");
    if (pos0 < 0 || pos0 + std::int64_t(ids.size()) > config_.contextLength)
        fail("forward: positions [", pos0, ", ", pos0 + std::int64_t(ids.size()), ") exceed the model's context of ",
             config_.contextLength, " tokens");
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= config_.vocabSize)
            fail("token id ", ids[i], " at position ", pos0 + int(i), " is outside the vocabulary [0, ",
                 config_.vocabSize, ")");
}

std::vector<float> CpuModel::forward(const std::vector<int>& ids, int pos0) {
    checkPositions(ids, pos0);
    std::vector<float> x;
    for (std::size_t i = 0; i < ids.size(); ++i) x = runPosition(ids[i], pos0 + int(i));
    return head(x);
}

std::vector<float> CpuModel::head(const std::vector<float>& x) const {
    // logits = ln_f(x) @ wte^T (lm_head^T when untied)
    std::vector<float> normed(x.size()), logits(static_cast<std::size_t>(config_.vocabSize));
    layerNorm(x.data(), vec("ln_f.weight"), vec("ln_f.bias"), config_.layerNormEpsilon, int(x.size()), normed.data());
    matrix(config_.tieWordEmbeddings ? "wte.weight" : "lm_head.weight").product(normed.data(), logits.data());
    return logits;
}

std::vector<float> CpuModel::runPosition(int id, int pos, const Observer& observer) {
    const ModelConfig& c = config_;
    const int C = c.embedDim, H = c.heads, D = c.headDim(), F = c.innerDim, T = pos + 1;
    const float eps = c.layerNormEpsilon;
    // x = wte[id] + wpe[pos]
    std::vector<float> x(static_cast<std::size_t>(C));
    matrix("wte.weight").row(id, x.data());
    const std::vector<float>& wpe = vec("wpe.weight");
    for (int i = 0; i < C; ++i) x[std::size_t(i)] += wpe[std::size_t(pos) * std::size_t(C) + std::size_t(i)];
    const auto size = [](int n) { return static_cast<std::size_t>(n); };
    std::vector<float> a(size(C)), qkv(size(3 * C)), attended(size(C)), hidden(size(F)), scores(size(T)),
        probs(observer.attention ? size(H * T) : 0);
    for (int l = 0; l < c.layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        float* keys = keys_[std::size_t(l)].data();
        float* values = values_[std::size_t(l)].data();
        // q, k, v = ln_1(x) @ W_qkv + b_qkv  (k and v into the cache row of this position)
        layerNorm(x.data(), vec(h + "ln_1.weight"), vec(h + "ln_1.bias"), eps, C, a.data());
        matrix(h + "attn.c_attn.weight").product(a.data(), qkv.data());
        addInto(qkv, vec(h + "attn.c_attn.bias"));
        std::copy(qkv.begin() + C, qkv.begin() + 2 * C, keys + std::size_t(pos) * std::size_t(C));
        std::copy(qkv.begin() + 2 * C, qkv.end(), values + std::size_t(pos) * std::size_t(C));
        // attended = softmax(q k^T * scale, causal) v, head by head
        float scale = c.scaleAttentionWeights ? 1.0f / std::sqrt(float(D)) : 1.0f;
        if (c.scaleAttentionByInverseLayer) scale /= float(l + 1);
        std::fill(attended.begin(), attended.end(), 0.0f);
        for (int head = 0; head < H; ++head) {
            const float* q = qkv.data() + head * D;
            float largest = -INFINITY;
            for (int t = 0; t < T; ++t) {
                scores[std::size_t(t)] = scale * cpu::dot(q, keys + std::size_t(t) * std::size_t(C) + head * D, D);
                largest = std::max(largest, scores[std::size_t(t)]);
            }
            float total = 0.0f;
            for (int t = 0; t < T; ++t) total += scores[std::size_t(t)] = std::exp(scores[std::size_t(t)] - largest);
            for (int t = 0; t < T; ++t) {
                const float p = scores[std::size_t(t)] / total;
                cpu::addScaled(attended.data() + head * D, p, values + std::size_t(t) * std::size_t(C) + head * D, D);
                if (!probs.empty()) probs[size(head * T + t)] = p;
            }
        }
        if (observer.attention) observer.attention(l, probs);
        // x = x + attended @ W_o + b_o
        matrix(h + "attn.c_proj.weight").product(attended.data(), x.data(), true);
        addInto(x, vec(h + "attn.c_proj.bias"));
        // hidden = act(ln_2(x) @ W_fc + b_fc)
        layerNorm(x.data(), vec(h + "ln_2.weight"), vec(h + "ln_2.bias"), eps, C, a.data());
        matrix(h + "mlp.c_fc.weight").product(a.data(), hidden.data());
        const std::vector<float>& bias = vec(h + "mlp.c_fc.bias");
        for (int i = 0; i < F; ++i)
            hidden[std::size_t(i)] = activate(hidden[std::size_t(i)] + bias[std::size_t(i)], c.activation);
        // x = x + hidden @ W_proj + b_proj
        matrix(h + "mlp.c_proj.weight").product(hidden.data(), x.data(), true);
        addInto(x, vec(h + "mlp.c_proj.bias"));
        if (observer.afterBlock) observer.afterBlock(l, x);
    }
    return x;
}

}  // namespace gpt2
