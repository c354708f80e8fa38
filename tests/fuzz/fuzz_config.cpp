// Arbitrary text as a Hugging Face config.json. An accepted config must be one the engine can run
// (positive sizes, n_embd a multiple of n_head, a positive finite epsilon), and what
// modelConfigToJson writes for it (the config that a model reports to the page) must parse back to the same
// config.
#include <cmath>
#include <string>

#include "format/model_config.h"
#include "fuzz_common.h"
#include "util/error.h"

namespace {

void checkRunnable(const gpt2::ModelConfig& c) {
    GPT2_FUZZ_CHECK(c.vocabSize > 0 && c.contextLength > 0 && c.embedDim > 0 && c.layers > 0 && c.heads > 0 &&
                    c.innerDim > 0);
    GPT2_FUZZ_CHECK(c.embedDim % c.heads == 0 && c.headDim() > 0);
    GPT2_FUZZ_CHECK(std::isfinite(c.layerNormEpsilon) && c.layerNormEpsilon > 0);
}

}  // namespace

GPT2_FUZZ_ENTRY(config)(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    gpt2::ModelConfig config;
    try {
        config = gpt2::parseModelConfig(text, "config.json");
    } catch (const gpt2::Error&) {
        return 0;
    }
    checkRunnable(config);

    const std::string json = gpt2::modelConfigToJson(config);
    gpt2::ModelConfig again;
    try {
        again = gpt2::parseModelConfig(json, "round trip");
    } catch (const gpt2::Error& e) {
        std::fprintf(stderr, "modelConfigToJson wrote a config parseModelConfig rejects: %s\n%s\n", e.what(),
                     json.c_str());
        GPT2_FUZZ_CHECK(!"round trip rejected");
    }
    GPT2_FUZZ_CHECK(again.vocabSize == config.vocabSize && again.contextLength == config.contextLength &&
                    again.embedDim == config.embedDim && again.layers == config.layers && again.heads == config.heads &&
                    again.innerDim == config.innerDim && again.layerNormEpsilon == config.layerNormEpsilon &&
                    again.activation == config.activation &&
                    again.scaleAttentionWeights == config.scaleAttentionWeights &&
                    again.scaleAttentionByInverseLayer == config.scaleAttentionByInverseLayer &&
                    again.tieWordEmbeddings == config.tieWordEmbeddings && again.weightBytes == config.weightBytes);
    return 0;
}
