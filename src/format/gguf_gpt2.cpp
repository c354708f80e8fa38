#include "format/gguf_gpt2.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "util/error.h"

namespace gpt2 {
namespace {

// llama.cpp's tensor names beside Hugging Face's, for every tensor of a GPT-2 block and of the model.
const std::pair<const char*, const char*> kBlockNames[] = {
    {"attn_norm.weight", "ln_1.weight"},          {"attn_norm.bias", "ln_1.bias"},
    {"attn_qkv.weight", "attn.c_attn.weight"},    {"attn_qkv.bias", "attn.c_attn.bias"},
    {"attn_output.weight", "attn.c_proj.weight"}, {"attn_output.bias", "attn.c_proj.bias"},
    {"ffn_norm.weight", "ln_2.weight"},           {"ffn_norm.bias", "ln_2.bias"},
    {"ffn_up.weight", "mlp.c_fc.weight"},         {"ffn_up.bias", "mlp.c_fc.bias"},
    {"ffn_down.weight", "mlp.c_proj.weight"},     {"ffn_down.bias", "mlp.c_proj.bias"},
};
const std::pair<const char*, const char*> kModelNames[] = {
    {"token_embd.weight", "wte.weight"}, {"position_embd.weight", "wpe.weight"}, {"output_norm.weight", "ln_f.weight"},
    {"output_norm.bias", "ln_f.bias"},   {"output.weight", "lm_head.weight"},
};

// "blk.3.attn_qkv.weight" -> (3, "attn_qkv.weight"); also for "h.3.attn.c_attn.weight" with `prefix` "h.".
bool splitBlock(const std::string& name, const std::string& prefix, int& block, std::string& rest) {
    if (name.rfind(prefix, 0) != 0) return false;
    const std::size_t dot = name.find('.', prefix.size());
    if (dot == std::string::npos || dot == prefix.size()) return false;
    const std::string number = name.substr(prefix.size(), dot - prefix.size());
    if (number.size() > 6 || number.find_first_not_of("0123456789") != std::string::npos) return false;
    block = std::stoi(number);
    rest = name.substr(dot + 1);
    return true;
}

std::string mapName(const std::string& name, bool toHf) {
    for (const auto& [gguf, hf] : kModelNames)
        if (name == (toHf ? gguf : hf)) return toHf ? hf : gguf;
    int block;
    std::string rest;
    if (!splitBlock(name, toHf ? "blk." : "h.", block, rest)) return "";
    for (const auto& [gguf, hf] : kBlockNames)
        if (rest == (toHf ? gguf : hf))
            return (toHf ? "h." : "blk.") + std::to_string(block) + "." + (toHf ? hf : gguf);
    return "";
}

}  // namespace

ModelConfig ggufGpt2Config(const GgufHeader& h) {
    const std::string& architecture = h.text("general.architecture");
    if (architecture != "gpt2")
        fail(h.label, ": general.architecture is \"", architecture, "\"; this engine runs GPT-2 (\"gpt2\") models");
    const GgufTensor* embedding = h.tensor("token_embd.weight");
    if (!embedding) fail(h.label, ": tensor token_embd.weight is missing; is this a complete GPT-2 GGUF file?");
    if (embedding->dims.size() != 2)
        fail(h.label, ": tensor token_embd.weight has ", embedding->dims.size(), " dimensions, expected 2");
    // Through config.json's parser, so a GGUF file is held to the same limits as a checkpoint.
    const nlohmann::json json = {
        {"model_type", "gpt2"},
        {"vocab_size", embedding->dims[1]},
        {"n_positions", h.integer("gpt2.context_length")},
        {"n_embd", h.integer("gpt2.embedding_length")},
        {"n_layer", h.integer("gpt2.block_count")},
        {"n_head", h.integer("gpt2.attention.head_count")},
        {"n_inner", h.integer("gpt2.feed_forward_length")},
        {"layer_norm_epsilon", h.number("gpt2.attention.layer_norm_epsilon")},
        {"activation_function", "gelu_new"},
        {"tie_word_embeddings", h.tensor("output.weight") == nullptr},
    };
    return parseModelConfig(json.dump(), h.label + " (gpt2.* metadata)");
}

std::vector<std::string> gpt2TensorNames(const ModelConfig& config) {
    std::vector<std::string> names;
    for (const auto& [gguf, hf] : kModelNames)
        if (std::string(hf) != "lm_head.weight" || !config.tieWordEmbeddings) names.push_back(hf);
    for (int layer = 0; layer < config.layers; ++layer)
        for (const auto& [gguf, hf] : kBlockNames) names.push_back("h." + std::to_string(layer) + "." + hf);
    return names;
}

std::string huggingFaceName(const std::string& gguf) { return mapName(gguf, true); }

std::string ggufName(const std::string& hf) { return mapName(hf, false); }

bool storedTransposed(const std::string& hf) {
    for (const char* suffix : {"attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight"}) {
        const std::string s = suffix;
        if (hf.size() >= s.size() && hf.compare(hf.size() - s.size(), s.size(), s) == 0) return true;
    }
    return false;
}

std::vector<std::int64_t> ggufDims(const std::string& hf, std::vector<std::int64_t> shape) {
    if (!storedTransposed(hf)) std::reverse(shape.begin(), shape.end());
    return shape;
}

std::vector<float> transposed(const std::vector<float>& values, std::int64_t rows, std::int64_t cols) {
    std::vector<float> out(values.size());
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) out[std::size_t(c * rows + r)] = values[std::size_t(r * cols + c)];
    return out;
}

}  // namespace gpt2
