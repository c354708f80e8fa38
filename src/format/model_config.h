#pragma once
// The GPT-2 hyper-parameters the engine needs, read from a Hugging Face config.json.
#include <string>

namespace gpt2 {

enum class Activation { GeluTanh, GeluErf, Relu };

struct ModelConfig {
    int vocabSize = 50257;
    int contextLength = 1024;  // n_positions
    int embedDim = 768;        // n_embd
    int layers = 12;           // n_layer
    int heads = 12;            // n_head
    int innerDim = 3072;       // n_inner, or 4 * n_embd when null
    float layerNormEpsilon = 1e-5f;
    Activation activation = Activation::GeluTanh;
    bool scaleAttentionWeights = true;          // divide scores by sqrt(head_dim)
    bool scaleAttentionByInverseLayer = false;  // also divide by layer index + 1
    bool tieWordEmbeddings = true;
    // Bytes per weight the checkpoint says it stores ("dtype", or "torch_dtype" before transformers
    // 5: 4 for float32, 2 for float16 and bfloat16); 0 where it says nothing the engine knows. Only a
    // plan made before the weights' file is read uses it (the CPU backend keeps weights as stored).
    int weightBytes = 0;

    int headDim() const { return embedDim / heads; }
};

// `label` names the source in errors (a path or URL). Rejects configs the engine cannot run.
ModelConfig parseModelConfig(const std::string& jsonText, const std::string& label);
std::string modelConfigToJson(const ModelConfig& config);

}  // namespace gpt2
