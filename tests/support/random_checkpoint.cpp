#include "support/random_checkpoint.h"

#include "support/fixture.h"
#include "weights-tools/synthetic_checkpoint.h"

namespace gpt2::testing {

std::vector<float> randomVector(std::size_t n, float stddev, std::mt19937& rng, float mean) {
    std::normal_distribution<float> dist(mean, stddev);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

ModelConfig shapeConfig(int vocab, int context, int embd, int layers, int heads, int inner, Activation activation) {
    ModelConfig c;
    c.vocabSize = vocab;
    c.contextLength = context;
    c.embedDim = embd;
    c.layers = layers;
    c.heads = heads;
    c.innerDim = inner;
    c.activation = activation;
    return c;
}

std::string writeSyntheticCheckpoint(const ModelConfig& config, unsigned seed) {
    const std::string dir = makeTempDir("gpt2-synthetic");
    SyntheticWeights weights;
    weights.seed = seed;
    weights.weightStd = 0.3f;
    weights.biasStd = 0.1f;
    weights.gainStd = 0.1f;
    gpt2::writeSyntheticCheckpoint(dir, config, weights);
    return dir;
}

}  // namespace gpt2::testing
