#include "support/synthetic_checkpoint.h"

#include <cstdlib>

#include "util/error.h"
#include "weights-tools/synthetic_checkpoint.h"

namespace gpt2::testing {

std::vector<float> randomVector(std::size_t n, float stddev, std::mt19937& rng, float mean) {
    std::normal_distribution<float> dist(mean, stddev);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

std::string writeSyntheticCheckpoint(const ModelConfig& config, unsigned seed) {
    char pattern[] = "/tmp/gpt2-synthetic-XXXXXX";
    if (!mkdtemp(pattern)) fail("cannot create a temporary folder");
    SyntheticWeights weights;
    weights.seed = seed;
    weights.weightStd = 0.3f;
    weights.biasStd = 0.1f;
    weights.gainStd = 0.1f;
    gpt2::writeSyntheticCheckpoint(pattern, config, weights);
    return pattern;
}

}  // namespace gpt2::testing
