#include "format/model_config.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace gpt2 {
namespace {

int positiveInt(const nlohmann::json& json, const char* key, int fallback, const std::string& label) {
    if (!json.contains(key) || json[key].is_null()) return fallback;
    const auto& v = json[key];
    if (!v.is_number_integer() || v.get<long long>() <= 0 || v.get<long long>() > (1 << 24))
        fail(label, ": ", key, " must be a positive integer, got ", v.dump());
    return v.get<int>();
}

bool flag(const nlohmann::json& json, const char* key, bool fallback, const std::string& label) {
    if (!json.contains(key) || json[key].is_null()) return fallback;
    if (!json[key].is_boolean()) fail(label, ": ", key, " must be true or false, got ", json[key].dump());
    return json[key].get<bool>();
}

Activation parseActivation(const std::string& name, const std::string& label) {
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::GeluTanh;
    if (name == "gelu") return Activation::GeluErf;
    if (name == "relu") return Activation::Relu;
    fail(label, ": activation_function \"", name,
         "\" is not supported (use gelu_new, gelu_pytorch_tanh, gelu or relu)");
}

const char* activationName(Activation a) {
    switch (a) {
        case Activation::GeluTanh: return "gelu_new";
        case Activation::GeluErf: return "gelu";
        case Activation::Relu: return "relu";
    }
    return "gelu_new";
}

}  // namespace

ModelConfig parseModelConfig(const std::string& jsonText, const std::string& label) {
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(jsonText);
    } catch (const nlohmann::json::exception& e) {
        fail(label, ": not valid JSON (", e.what(), ")");
    }
    if (!json.is_object()) fail(label, ": expected a JSON object");
    if (json.contains("model_type") && json["model_type"] != "gpt2")
        fail(label, ": model_type is ", json["model_type"].dump(), ", only \"gpt2\" is supported");

    ModelConfig c;
    c.vocabSize = positiveInt(json, "vocab_size", c.vocabSize, label);
    c.contextLength = positiveInt(json, "n_positions", positiveInt(json, "n_ctx", c.contextLength, label), label);
    c.embedDim = positiveInt(json, "n_embd", c.embedDim, label);
    c.layers = positiveInt(json, "n_layer", c.layers, label);
    c.heads = positiveInt(json, "n_head", c.heads, label);
    c.innerDim = positiveInt(json, "n_inner", 4 * c.embedDim, label);
    // The same bound as an explicit n_inner, so modelConfigToJson's output parses back.
    if (c.innerDim > (1 << 24)) fail(label, ": n_inner (4 * n_embd when null) is ", c.innerDim, ", over ", 1 << 24);
    if (json.contains("layer_norm_epsilon")) {
        // Checked against float, the type the engine uses: 1e300 does not fit and 1e-50 would become 0.
        const auto& epsilon = json["layer_norm_epsilon"];
        if (!epsilon.is_number() || !(epsilon.get<double>() > 0) ||
            epsilon.get<double>() > std::numeric_limits<float>::max() || !(epsilon.get<float>() > 0))
            fail(label, ": layer_norm_epsilon must be a positive number a 32-bit float can hold, got ", epsilon.dump());
        c.layerNormEpsilon = epsilon.get<float>();
    }
    if (json.contains("activation_function")) {
        if (!json["activation_function"].is_string()) fail(label, ": activation_function must be a string");
        c.activation = parseActivation(json["activation_function"].get<std::string>(), label);
    }
    c.scaleAttentionWeights = flag(json, "scale_attn_weights", true, label);
    c.scaleAttentionByInverseLayer = flag(json, "scale_attn_by_inverse_layer_idx", false, label);
    c.tieWordEmbeddings = flag(json, "tie_word_embeddings", true, label);
    for (const char* key : {"dtype", "torch_dtype"})
        if (json.contains(key) && json[key].is_string() && c.weightBytes == 0) {
            const std::string dtype = json[key].get<std::string>();
            c.weightBytes = dtype == "float32" ? 4 : dtype == "float16" || dtype == "bfloat16" ? 2 : 0;
        }
    if (flag(json, "add_cross_attention", false, label))
        fail(label, ": add_cross_attention is set; only decoder-only GPT-2 models are supported");
    if (c.embedDim % c.heads != 0)
        fail(label, ": n_embd (", c.embedDim, ") must be a multiple of n_head (", c.heads, ")");
    return c;
}

std::string modelConfigToJson(const ModelConfig& c) {
    nlohmann::json json = {
        {"model_type", "gpt2"},
        {"vocab_size", c.vocabSize},
        {"n_positions", c.contextLength},
        {"n_embd", c.embedDim},
        {"n_layer", c.layers},
        {"n_head", c.heads},
        {"n_inner", c.innerDim},
        {"layer_norm_epsilon", c.layerNormEpsilon},
        {"activation_function", activationName(c.activation)},
        {"scale_attn_weights", c.scaleAttentionWeights},
        {"scale_attn_by_inverse_layer_idx", c.scaleAttentionByInverseLayer},
        {"tie_word_embeddings", c.tieWordEmbeddings},
    };
    if (c.weightBytes != 0) json["dtype"] = c.weightBytes == 4 ? "float32" : "float16";
    return json.dump(2);
}

}  // namespace gpt2
