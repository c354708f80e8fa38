#pragma once
// An independent CPU reference for GPT-2: plain loops over Hugging Face tensor layouts, double
// accumulation, no padding, no textures. It shares nothing with the GL path but the tensor reader,
// so agreement between the two means something.
#include <string>
#include <vector>

#include "format/checkpoint.h"

namespace gpt2::reference {

std::vector<float> layerNorm(const std::vector<float>& x, int rows, int cols, const std::vector<float>& gamma,
                             const std::vector<float>& beta, float eps);
// x [rows, K] @ w [K, N] (+ bias [N] when not empty).
std::vector<float> matmul(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias,
                          int rows, int K, int N);
float activation(float x, Activation kind);
// Causal attention of queries at positions [pos0, pos0 + T) over keys [0, pos0 + T).
// q [T, C]; k, v [pos0 + T, C]; returns [T, C]; `probs` (if given) gets [heads][T][pos0 + T].
std::vector<float> attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                             int T, int pos0, int C, int heads, float scale, std::vector<float>* probs = nullptr);

struct ForwardResult {
    std::vector<float> logits;                     // [T, vocab]
    std::vector<std::vector<float>> attention;     // per layer [heads][T][T]
    std::vector<std::vector<float>> blockOutputs;  // per layer, the residual stream after the block [T, C]
};

// What to round through fp16 as the engine's fp16 paths do. `weights`: every weight matrix (not
// LayerNorm parameters or biases), as fp16 textures store them. The inputs of a prompt's products
// that the engine reads as fp16 row pairs (Tuning::halfPromptInputs): `layerNormOutputs` (ln_f's
// too), `activatedRows`, the MLP's hidden rows, which an activation pass writes only where c_fc is
// split (otherwise its epilogue activates them, in fp32), and `queries`, which the prompt's attention
// scores read as pairs where they compute several queries per fragment. `keysValues`: the K/V cache,
// stored as fp16 with the load option kvCache 'fp16'. The attention output stays fp32.
struct HalfRounding {
    bool weights = false;
    bool layerNormOutputs = false;
    bool activatedRows = false;
    bool queries = false;
    bool keysValues = false;
};

// A caller's intervention (the engine's model/interventions.h, described again so that the
// reference shares nothing with it), applied where its definition acts, in list order: kind
// "ablateHead" (layer, head), "ablateNeurons" (layer, neurons), "steer" (layer, vector, scale) or
// "patch" (layer, position, vector).
struct Intervention {
    std::string kind;
    int layer = 0, head = 0, position = 0;
    std::vector<int> neurons = {};
    std::vector<float> vector = {};
    float scale = 1.0f;
};

// The whole forward for `ids`.
ForwardResult forward(const TensorSource& source, const std::vector<int>& ids, HalfRounding rounding = {},
                      const std::vector<Intervention>& interventions = {});
// lm_head(ln_f(x)) for a residual stream x [T, C]: logits [T, vocab] (the logit lens of a block's output).
std::vector<float> head(const TensorSource& source, const std::vector<float>& x, int T, HalfRounding rounding = {});

}  // namespace gpt2::reference
