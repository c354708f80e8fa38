#include "cpu/cpu_model.h"

#include <algorithm>
#include <cmath>

#include "cpu/cpu_ops.h"
#include "cpu/thread_pool.h"
#include "util/error.h"

namespace gpt2 {
namespace {

// Zeroes, in each of `n` rows, the columns of the groups `ablated` marks (heads of D columns, hidden
// units of one): what the GPU's column masks do (column_mask.glsl).
void zeroAblated(std::vector<float>& rows, int n, const std::vector<bool>& ablated, int group) {
    const std::size_t width = rows.size() / std::size_t(n), g = std::size_t(group);
    for (std::size_t a = 0; a < ablated.size(); ++a)
        if (ablated[a])
            for (int i = 0; i < n; ++i)
                std::fill_n(rows.begin() + std::ptrdiff_t(std::size_t(i) * width + a * g), g, 0.0f);
}

}  // namespace

CpuModel::CpuModel(const ModelConfig& config, bool halfCache)
    : config_(config), specs_(engineMatrices(config)), cache_(config, halfCache) {}

std::int64_t CpuModel::plannedBytes(const ModelConfig& config, bool halfCache,
                                    const std::vector<const ModelFileHeader*>& files) {
    std::int64_t total = cpu::KvCache::bytesAt(config, halfCache, config.contextLength);
    for (const MatrixSpec& spec : engineMatrices(config)) {
        std::int64_t values = 1;
        for (const std::int64_t dim : spec.sourceShape) values *= dim;
        const StoredTensor* stored = nullptr;
        for (const ModelFileHeader* file : files)
            for (const StoredTensor& t : file->tensors)
                if (t.name == spec.name) stored = &t;
        if (!keptInBlocks(spec))
            total += values * 4;  // decoded to floats
        else
            total += stored ? std::int64_t(stored->end - stored->begin)
                            : values * (config.weightBytes ? config.weightBytes : 4);
    }
    return total;
}

CpuModel::CpuModel(const ModelOnDisk& model, bool halfCache) : CpuModel(model.config, halfCache) {
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
    if (keptInBlocks(*spec)) {
        matrices_[spec->name] = StoredMatrix(tensor, std::move(bytes), outputChannelsAreRows(*spec));
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
    return total + cpu::KvCache::bytesAt(config_, cache_.half(), config_.contextLength);
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
    const std::vector<float> x = runPositions(ids, pos0);
    return head(std::vector<float>(x.end() - config_.embedDim, x.end()));
}

std::vector<float> CpuModel::head(const std::vector<float>& x) const {
    // logits = ln_f(x) @ wte^T (lm_head^T when untied)
    std::vector<float> normed(x.size()), logits(static_cast<std::size_t>(config_.vocabSize));
    cpu::layerNorm(x.data(), vec("ln_f.weight").data(), vec("ln_f.bias").data(), config_.layerNormEpsilon,
                   int(x.size()), normed.data());
    matrix(config_.tieWordEmbeddings ? "wte.weight" : "lm_head.weight").product(normed.data(), logits.data());
    return logits;
}

std::vector<float> CpuModel::runPositions(const std::vector<int>& ids, int pos0, const Observer& observer) {
    const ModelConfig& c = config_;
    const int C = c.embedDim, H = c.heads, D = c.headDim(), F = c.innerDim, n = int(ids.size());
    const float eps = c.layerNormEpsilon;
    cache_.reserve(pos0 + n);
    const auto size = [](int count) { return static_cast<std::size_t>(count); };
    const auto row = [&](std::vector<float>& m, int i, int width) { return m.data() + size(i) * size(width); };
    // x = wte[ids] + wpe[positions]                                          [n, C]
    std::vector<float> x(size(n * C));
    const std::vector<float>& wpe = vec("wpe.weight");
    for (int i = 0; i < n; ++i) {
        matrix("wte.weight").row(ids[size(i)], row(x, i, C));
        for (int j = 0; j < C; ++j) row(x, i, C)[j] += wpe[size(pos0 + i) * size(C) + size(j)];
    }
    std::vector<float> a(size(n * C)), qkv(size(n * 3 * C)), attended(size(n * C)), hidden(size(n * F)), probs;
    const auto layerNormRows = [&](const std::string& prefix) {
        const float *gamma = vec(prefix + "weight").data(), *beta = vec(prefix + "bias").data();
        cpu::parallelFor(n, 1, [&](int begin, int end) {
            for (int i = begin; i < end; ++i) cpu::layerNorm(row(x, i, C), gamma, beta, eps, C, row(a, i, C));
        });
    };
    const auto addBias = [&](std::vector<float>& m, int width, const std::vector<float>& bias) {
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < width; ++j) row(m, i, width)[j] += bias[size(j)];
    };
    for (int l = 0; l < c.layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        // q, k, v = ln_1(x) @ W_qkv + b_qkv  (k and v into the cache rows of their positions)
        layerNormRows(h + "ln_1.");
        matrix(h + "attn.c_attn.weight").product(a.data(), qkv.data(), n);
        addBias(qkv, 3 * C, vec(h + "attn.c_attn.bias"));
        for (int i = 0; i < n; ++i) cache_.store(l, pos0 + i, row(qkv, i, 3 * C) + C, row(qkv, i, 3 * C) + 2 * C);
        // attended = softmax(q k^T * scale, causal) v, position by position and head by head
        float scale = c.scaleAttentionWeights ? 1.0f / std::sqrt(float(D)) : 1.0f;
        if (c.scaleAttentionByInverseLayer) scale /= float(l + 1);
        // Every (head, position) on its own: all positions at once, or one at a time for an observer
        // of each one's probabilities.
        std::fill(attended.begin(), attended.end(), 0.0f);
        const int together = observer.attention ? 1 : n;
        for (int i0 = 0; i0 < n; i0 += together) {
            if (observer.attention) probs.assign(size(H * (pos0 + i0 + 1)), 0.0f);
            // Heads outermost, so that each thread's share spans short and long rows alike.
            cpu::parallelFor(H * together, 1, [&](int begin, int end) {
                std::vector<float> scores;
                for (int unit = begin; unit < end; ++unit) {
                    const int i = i0 + unit % together, head = unit / together;
                    cache_.attend(l, row(qkv, i, 3 * C), pos0 + i + 1, head, scale, row(attended, i, C),
                                  observer.attention ? probs.data() : nullptr, scores);
                }
            });
            if (observer.attention) observer.attention(l, pos0 + i0, probs);
        }
        const BlockInterventions* hooks = interventions_.block(l);
        if (hooks) zeroAblated(attended, n, hooks->heads, D);
        // x = x + attended @ W_o + b_o
        matrix(h + "attn.c_proj.weight").product(attended.data(), x.data(), n, true);
        addBias(x, C, vec(h + "attn.c_proj.bias"));
        // hidden = act(ln_2(x) @ W_fc + b_fc)
        layerNormRows(h + "ln_2.");
        matrix(h + "mlp.c_fc.weight").product(a.data(), hidden.data(), n);
        addBias(hidden, F, vec(h + "mlp.c_fc.bias"));
        cpu::parallelFor(n * F, 256, [&](int begin, int end) {
            for (int j = begin; j < end; ++j) hidden[size(j)] = cpu::activate(hidden[size(j)], c.activation);
        });
        if (hooks) zeroAblated(hidden, n, hooks->neurons, 1);
        // x = x + hidden @ W_proj + b_proj
        matrix(h + "mlp.c_proj.weight").product(hidden.data(), x.data(), n, true);
        addBias(x, C, vec(h + "mlp.c_proj.bias"));
        if (hooks) intervene(*hooks, x, pos0, n);
        if (observer.afterBlock)
            for (int i = 0; i < n; ++i)
                observer.afterBlock(l, pos0 + i, std::vector<float>(row(x, i, C), row(x, i, C) + C));
    }
    return x;
}

void CpuModel::intervene(const BlockInterventions& hooks, std::vector<float>& x, int pos0, int n) const {
    const std::size_t C = std::size_t(config_.embedDim);
    if (!hooks.added.empty())
        for (int i = 0; i < n; ++i)
            for (std::size_t j = 0; j < C; ++j) x[std::size_t(i) * C + j] += hooks.added[j];
    for (const auto& [position, vector] : hooks.patched)
        if (position >= pos0 && position < pos0 + n)
            std::copy(vector.begin(), vector.end(), x.begin() + std::ptrdiff_t(std::size_t(position - pos0) * C));
}

}  // namespace gpt2
