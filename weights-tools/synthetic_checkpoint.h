#pragma once
// Random-weight Hugging Face GPT-2 checkpoints of any config, written tensor by tensor (a 1.5B
// checkpoint never has to fit in memory): for benchmarks (gpt2-synth) and tests.
#include <string>

#include "format/model_config.h"
#include "format/safetensors.h"

namespace gpt2 {

struct SyntheticWeights {
    unsigned seed = 0;
    DType dtype = DType::F32;  // F32 or F16
    float weightStd = 0.02f;   // matrices and embeddings ~ N(0, weightStd), as Hugging Face initialises GPT-2
    float biasStd = 0.0f;      // biases and LayerNorm shifts ~ N(0, biasStd)
    float gainStd = 0.0f;      // LayerNorm gains ~ 1 + N(0, gainStd)
};

// The official GPT-2 sizes: "124M", "355M", "774M", "1.5B".
ModelConfig officialConfig(const std::string& size);

// Writes config.json and model.safetensors ("transformer." names) into `dir`, which must exist.
void writeSyntheticCheckpoint(const std::string& dir, const ModelConfig& config, const SyntheticWeights& weights);

}  // namespace gpt2
