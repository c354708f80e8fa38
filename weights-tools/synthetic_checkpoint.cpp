#include "weights-tools/synthetic_checkpoint.h"

#include <fstream>
#include <random>

#include "format/safetensors_writer.h"
#include "util/error.h"

namespace gpt2 {

ModelConfig officialConfig(const std::string& size) {
    ModelConfig c;
    struct Shape {
        const char* name;
        int embd, layers, heads;
    };
    for (const Shape& s : {Shape{"124M", 768, 12, 12}, Shape{"355M", 1024, 24, 16}, Shape{"774M", 1280, 36, 20},
                           Shape{"1.5B", 1600, 48, 25}}) {
        if (size != s.name) continue;
        c.embedDim = s.embd;
        c.layers = s.layers;
        c.heads = s.heads;
        c.innerDim = 4 * s.embd;
        return c;
    }
    fail("unknown size \"", size, "\"; the official GPT-2 sizes are 124M, 355M, 774M and 1.5B");
}

void writeSyntheticCheckpoint(const std::string& dir, const ModelConfig& c, const SyntheticWeights& w) {
    std::ofstream(dir + "/config.json") << modelConfigToJson(c);
    const std::int64_t C = c.embedDim, I = c.innerDim;
    std::vector<TensorToWrite> tensors = {{"transformer.wte.weight", w.dtype, {c.vocabSize, C}},
                                          {"transformer.wpe.weight", w.dtype, {c.contextLength, C}}};
    for (int l = 0; l < c.layers; ++l) {
        const std::string h = "transformer.h." + std::to_string(l) + ".";
        const std::pair<const char*, std::vector<std::int64_t>> layer[] = {{"ln_1.weight", {C}},
                                                                           {"ln_1.bias", {C}},
                                                                           {"attn.c_attn.weight", {C, 3 * C}},
                                                                           {"attn.c_attn.bias", {3 * C}},
                                                                           {"attn.c_proj.weight", {C, C}},
                                                                           {"attn.c_proj.bias", {C}},
                                                                           {"ln_2.weight", {C}},
                                                                           {"ln_2.bias", {C}},
                                                                           {"mlp.c_fc.weight", {C, I}},
                                                                           {"mlp.c_fc.bias", {I}},
                                                                           {"mlp.c_proj.weight", {I, C}},
                                                                           {"mlp.c_proj.bias", {C}}};
        for (const auto& [name, shape] : layer) tensors.push_back({h + name, w.dtype, shape});
    }
    tensors.push_back({"transformer.ln_f.weight", w.dtype, {C}});
    tensors.push_back({"transformer.ln_f.bias", w.dtype, {C}});
    if (!c.tieWordEmbeddings) tensors.push_back({"lm_head.weight", w.dtype, {c.vocabSize, C}});

    std::mt19937 rng(w.seed);
    writeSafetensors(dir + "/model.safetensors", tensors, [&](std::size_t i) {
        const TensorToWrite& t = tensors[i];
        std::size_t n = 1;
        for (auto d : t.shape) n *= std::size_t(d);
        const bool vector = t.shape.size() == 1;
        const bool gain =
            vector && t.name.find("ln_") != std::string::npos && t.name.find(".weight") != std::string::npos;
        const float mean = gain ? 1.0f : 0.0f;
        const float std = gain ? w.gainStd : vector ? w.biasStd : w.weightStd;
        std::vector<float> values(n, mean);
        if (std > 0) {
            std::normal_distribution<float> normal(mean, std);
            for (float& v : values) v = normal(rng);
        }
        return values;
    });
}

}  // namespace gpt2
