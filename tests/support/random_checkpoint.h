#pragma once
// Random inputs and random-weight checkpoints for the tests.
#include <random>
#include <string>

#include "format/model_config.h"

namespace gpt2::testing {

// A config of this shape; every other field keeps ModelConfig's default (GPT-2's).
ModelConfig shapeConfig(int vocab, int context, int embd, int layers, int heads, int inner,
                        Activation activation = Activation::GeluTanh);

// Writes a checkpoint of `config` into a new temporary folder and returns its path. Weights are
// large enough that every tensor matters: matrices ~ N(0, 0.3), biases ~ N(0, 0.1), LayerNorm gains
// ~ 1 + N(0, 0.1).
std::string writeSyntheticCheckpoint(const ModelConfig& config, unsigned seed);

std::vector<float> randomVector(std::size_t n, float stddev, std::mt19937& rng, float mean = 0.0f);

}  // namespace gpt2::testing
