#include "reference/cpu_reference.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "util/half.h"

namespace gpt2::reference {

std::vector<float> layerNorm(const std::vector<float>& x, int rows, int cols, const std::vector<float>& gamma,
                             const std::vector<float>& beta, float eps) {
    std::vector<float> out(x.size());
    for (int r = 0; r < rows; ++r) {
        const float* row = &x[std::size_t(r) * cols];
        double mean = 0, var = 0;
        for (int c = 0; c < cols; ++c) mean += row[c];
        mean /= cols;
        for (int c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
        var /= cols;
        const double rstd = 1.0 / std::sqrt(var + eps);
        for (int c = 0; c < cols; ++c)
            out[std::size_t(r) * cols + c] = float((row[c] - mean) * rstd * gamma[c] + beta[c]);
    }
    return out;
}

std::vector<float> matmul(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias,
                          int rows, int K, int N) {
    std::vector<float> out(std::size_t(rows) * N);
    std::vector<double> acc(static_cast<std::size_t>(N));
    for (int r = 0; r < rows; ++r) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int k = 0; k < K; ++k) {
            const double a = x[std::size_t(r) * K + k];
            const float* wr = &w[std::size_t(k) * N];
            for (int n = 0; n < N; ++n) acc[std::size_t(n)] += a * wr[n];
        }
        for (int n = 0; n < N; ++n)
            out[std::size_t(r) * N + n] = float(acc[std::size_t(n)] + (bias.empty() ? 0.0 : bias[n]));
    }
    return out;
}

float activation(float x, Activation kind) {
    const double v = x;
    switch (kind) {
        case Activation::GeluTanh:
            return float(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
        case Activation::GeluErf: return float(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
        case Activation::Relu: return float(std::max(0.0, v));
    }
    return x;
}

std::vector<float> attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                             int T, int pos0, int C, int heads, float scale, std::vector<float>* probs) {
    const int D = C / heads, keys = pos0 + T;
    std::vector<float> out(std::size_t(T) * C, 0.0f);
    if (probs) probs->assign(std::size_t(heads) * T * keys, 0.0f);
    std::vector<double> p(static_cast<std::size_t>(keys));
    for (int h = 0; h < heads; ++h) {
        for (int t = 0; t < T; ++t) {
            const int qpos = pos0 + t;
            double m = -1e300;
            for (int s = 0; s <= qpos; ++s) {
                double d = 0;
                for (int i = 0; i < D; ++i)
                    d += double(q[std::size_t(t) * C + h * D + i]) * k[std::size_t(s) * C + h * D + i];
                p[std::size_t(s)] = d * scale;
                m = std::max(m, p[std::size_t(s)]);
            }
            double total = 0;
            for (int s = 0; s <= qpos; ++s) total += (p[std::size_t(s)] = std::exp(p[std::size_t(s)] - m));
            for (int s = 0; s <= qpos; ++s) {
                const double w = p[std::size_t(s)] / total;
                if (probs) (*probs)[(std::size_t(h) * T + t) * keys + s] = float(w);
                for (int i = 0; i < D; ++i)
                    out[std::size_t(t) * C + h * D + i] += float(w * v[std::size_t(s) * C + h * D + i]);
            }
        }
    }
    return out;
}

namespace {
std::vector<float> roundedToHalf(std::vector<float> values, bool round) {
    if (round)
        for (float& v : values) v = roundToHalf(v);
    return values;
}
}  // namespace

ForwardResult forward(const TensorSource& source, const std::vector<int>& ids, HalfRounding rounding,
                      const std::vector<Intervention>& interventions) {
    const ModelConfig& c = source.config();
    const int T = int(ids.size()), C = c.embedDim, I = c.innerDim, V = c.vocabSize;
    auto vec = [&](const std::string& name, std::int64_t n) { return source.read(name, {n}); };
    auto mat = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
        return roundedToHalf(source.read(name, {rows, cols}), rounding.weights);
    };
    auto normalised = [&](std::vector<float> values) {
        return roundedToHalf(std::move(values), rounding.layerNormOutputs);
    };

    const auto wte = mat("wte.weight", V, C);
    const auto wpe = mat("wpe.weight", c.contextLength, C);
    std::vector<float> x(std::size_t(T) * C);
    for (int t = 0; t < T; ++t)
        for (int i = 0; i < C; ++i)
            x[std::size_t(t) * C + i] = wte[std::size_t(ids[t]) * C + i] + wpe[std::size_t(t) * C + i];

    ForwardResult result;
    for (int l = 0; l < c.layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        const auto ln1 =
            normalised(layerNorm(x, T, C, vec(h + "ln_1.weight", C), vec(h + "ln_1.bias", C), c.layerNormEpsilon));
        const auto qkv =
            matmul(ln1, mat(h + "attn.c_attn.weight", C, 3 * C), vec(h + "attn.c_attn.bias", 3 * C), T, C, 3 * C);
        std::vector<float> q(std::size_t(T) * C), k(q.size()), v(q.size());
        for (int t = 0; t < T; ++t)
            for (int i = 0; i < C; ++i) {
                q[std::size_t(t) * C + i] = qkv[std::size_t(t) * 3 * C + i];
                k[std::size_t(t) * C + i] = qkv[std::size_t(t) * 3 * C + C + i];
                v[std::size_t(t) * C + i] = qkv[std::size_t(t) * 3 * C + 2 * C + i];
            }
        float scale = c.scaleAttentionWeights ? 1.0f / std::sqrt(float(c.headDim())) : 1.0f;
        if (c.scaleAttentionByInverseLayer) scale /= float(l + 1);
        std::vector<float> probs;
        auto a =
            attention(roundedToHalf(std::move(q), rounding.queries), roundedToHalf(std::move(k), rounding.keysValues),
                      roundedToHalf(std::move(v), rounding.keysValues), T, 0, C, c.heads, scale, &probs);
        const int D = c.headDim();
        for (const Intervention& hook : interventions)
            if (hook.kind == "ablateHead" && hook.layer == l)
                for (int t = 0; t < T; ++t)
                    for (int i = 0; i < D; ++i) a[std::size_t(t) * C + std::size_t(hook.head * D + i)] = 0.0f;
        result.attention.push_back(std::move(probs));
        const auto proj = matmul(a, mat(h + "attn.c_proj.weight", C, C), vec(h + "attn.c_proj.bias", C), T, C, C);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] += proj[i];
        const auto ln2 =
            normalised(layerNorm(x, T, C, vec(h + "ln_2.weight", C), vec(h + "ln_2.bias", C), c.layerNormEpsilon));
        auto hidden = matmul(ln2, mat(h + "mlp.c_fc.weight", C, I), vec(h + "mlp.c_fc.bias", I), T, C, I);
        for (float& e : hidden) e = activation(e, c.activation);
        for (const Intervention& hook : interventions)
            if (hook.kind == "ablateNeurons" && hook.layer == l)
                for (int t = 0; t < T; ++t)
                    for (const int n : hook.neurons) hidden[std::size_t(t) * I + std::size_t(n)] = 0.0f;
        hidden = roundedToHalf(std::move(hidden), rounding.activatedRows);
        const auto mlp = matmul(hidden, mat(h + "mlp.c_proj.weight", I, C), vec(h + "mlp.c_proj.bias", C), T, I, C);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] += mlp[i];
        for (const Intervention& hook : interventions) {
            if (hook.layer != l) continue;
            if (hook.kind == "steer")
                for (int t = 0; t < T; ++t)
                    for (int i = 0; i < C; ++i)
                        x[std::size_t(t) * C + i] = float(double(x[std::size_t(t) * C + i]) +
                                                          double(hook.scale) * double(hook.vector[std::size_t(i)]));
            if (hook.kind == "patch" && hook.position < T)
                std::copy(hook.vector.begin(), hook.vector.end(), x.begin() + std::ptrdiff_t(hook.position) * C);
        }
        result.blockOutputs.push_back(x);
    }
    result.logits = head(source, x, T, rounding);
    return result;
}

std::vector<float> head(const TensorSource& source, const std::vector<float>& x, int T, HalfRounding rounding) {
    const ModelConfig& c = source.config();
    const int C = c.embedDim, V = c.vocabSize;
    const std::vector<float> weights =
        roundedToHalf(source.read(c.tieWordEmbeddings ? "wte.weight" : "lm_head.weight", {V, C}), rounding.weights);
    const auto lnf = roundedToHalf(
        layerNorm(x, T, C, source.read("ln_f.weight", {C}), source.read("ln_f.bias", {C}), c.layerNormEpsilon),
        rounding.layerNormOutputs);
    std::vector<float> logits(std::size_t(T) * V, 0.0f);
    for (int t = 0; t < T; ++t)
        for (int vocab = 0; vocab < V; ++vocab) {
            double d = 0;
            for (int i = 0; i < C; ++i) d += double(lnf[std::size_t(t) * C + i]) * weights[std::size_t(vocab) * C + i];
            logits[std::size_t(t) * V + vocab] = float(d);
        }
    return logits;
}

}  // namespace gpt2::reference
