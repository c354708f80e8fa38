#pragma once
// Random-weight Hugging Face GPT-2 checkpoints of any config, written to a temporary folder, and an
// in-memory TensorSource for op tests.
#include <random>
#include <string>

#include "format/checkpoint.h"

namespace gpt2::testing {

// Writes config.json + model.safetensors (F32, "transformer." names) into a new temporary folder
// and returns its path. Weights ~ N(0, 0.3), biases ~ N(0, 0.1), LayerNorm gains ~ 1 + N(0, 0.1).
std::string writeSyntheticCheckpoint(const ModelConfig& config, unsigned seed);

std::vector<float> randomVector(std::size_t n, float stddev, std::mt19937& rng, float mean = 0.0f);

}  // namespace gpt2::testing
