#include "support/synthetic_checkpoint.h"

#include <cstdlib>
#include <fstream>

#include "format/safetensors_writer.h"
#include "util/error.h"

namespace gpt2::testing {

std::vector<float> randomVector(std::size_t n, float stddev, std::mt19937& rng, float mean) {
    std::normal_distribution<float> dist(mean, stddev);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

std::string writeSyntheticCheckpoint(const ModelConfig& c, unsigned seed) {
    char pattern[] = "/tmp/gpt2-synthetic-XXXXXX";
    if (!mkdtemp(pattern)) fail("cannot create a temporary folder");
    const std::string dir = pattern;
    std::ofstream(dir + "/config.json") << modelConfigToJson(c);

    const std::int64_t C = c.embedDim, I = c.innerDim;
    std::vector<TensorToWrite> tensors = {{"transformer.wte.weight", DType::F32, {c.vocabSize, C}},
                                          {"transformer.wpe.weight", DType::F32, {c.contextLength, C}},
                                          {"transformer.ln_f.weight", DType::F32, {C}},
                                          {"transformer.ln_f.bias", DType::F32, {C}}};
    for (int l = 0; l < c.layers; ++l) {
        const std::string h = "transformer.h." + std::to_string(l) + ".";
        for (const auto& [name, shape] : std::vector<std::pair<std::string, std::vector<std::int64_t>>>{
                 {"ln_1.weight", {C}}, {"ln_1.bias", {C}}, {"attn.c_attn.weight", {C, 3 * C}}, {"attn.c_attn.bias", {3 * C}},
                 {"attn.c_proj.weight", {C, C}}, {"attn.c_proj.bias", {C}}, {"ln_2.weight", {C}}, {"ln_2.bias", {C}},
                 {"mlp.c_fc.weight", {C, I}}, {"mlp.c_fc.bias", {I}}, {"mlp.c_proj.weight", {I, C}}, {"mlp.c_proj.bias", {C}}})
            tensors.push_back({h + name, DType::F32, shape});
    }
    if (!c.tieWordEmbeddings) tensors.push_back({"lm_head.weight", DType::F32, {c.vocabSize, C}});

    std::mt19937 rng(seed);
    writeSafetensors(dir + "/model.safetensors", tensors, [&](std::size_t i) {
        const auto& t = tensors[i];
        std::size_t n = 1;
        for (auto d : t.shape) n *= std::size_t(d);
        const bool isLayerNorm = t.name.find("ln_") != std::string::npos;
        const bool isGain = isLayerNorm && t.name.find(".weight") != std::string::npos;
        if (isGain) return randomVector(n, 0.1f, rng, 1.0f);
        if (t.shape.size() == 1) return randomVector(n, 0.1f, rng);
        return randomVector(n, 0.3f, rng);
    });
    return dir;
}

}  // namespace gpt2::testing
