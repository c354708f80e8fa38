#include "model/interventions.h"

#include <cmath>

#include "util/error.h"

namespace gpt2 {
namespace {

void checkIndex(const std::string& item, const char* what, int value, int count, const char* bound) {
    if (value < 0 || value >= count) fail(item, ": ", what, " ", value, " is outside [0, ", count, ") (", bound, ")");
}

void checkVector(const std::string& item, const std::vector<float>& vector, const ModelConfig& config) {
    if (int(vector.size()) != config.embedDim)
        fail(item, ": vector has ", vector.size(), " values, expected n_embd ", config.embedDim);
    for (std::size_t i = 0; i < vector.size(); ++i)
        if (!std::isfinite(vector[i])) fail(item, ": vector[", i, "] is ", vector[i], ", not a finite number");
}

}  // namespace

BlockInterventions BlockInterventions::none(const ModelConfig& config) {
    return {std::vector<bool>(std::size_t(config.heads)), std::vector<bool>(std::size_t(config.innerDim)), {}, {}};
}

InterventionPlan::InterventionPlan(const std::vector<Intervention>& list, const ModelConfig& config) {
    const auto blockFor = [&](int layer) -> BlockInterventions& {
        return blocks_.try_emplace(layer, BlockInterventions::none(config)).first->second;
    };
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string item = "interventions[" + std::to_string(i) + "]";
        std::visit(
            [&](const auto& v) {
                using T = std::decay_t<decltype(v)>;
                const char* kind = std::is_same_v<T, AblateHead>      ? ".ablateHead"
                                   : std::is_same_v<T, AblateNeurons> ? ".ablateNeurons"
                                   : std::is_same_v<T, Steer>         ? ".steer"
                                                                      : ".patch";
                const std::string where = item + kind;
                checkIndex(where, "layer", v.layer, config.layers, "n_layer");
                BlockInterventions& b = blockFor(v.layer);
                if constexpr (std::is_same_v<T, AblateHead>) {
                    checkIndex(where, "head", v.head, config.heads, "n_head");
                    b.heads[std::size_t(v.head)] = true;
                } else if constexpr (std::is_same_v<T, AblateNeurons>) {
                    for (const int n : v.neurons) {
                        checkIndex(where, "neuron", n, config.innerDim, "the MLP's inner width");
                        b.neurons[std::size_t(n)] = true;
                    }
                } else if constexpr (std::is_same_v<T, Steer>) {
                    checkVector(where, v.vector, config);
                    if (!std::isfinite(v.scale)) fail(where, ": scale is ", v.scale, ", not a finite number");
                    if (b.added.empty()) b.added.assign(std::size_t(config.embedDim), 0.0f);
                    for (std::size_t j = 0; j < v.vector.size(); ++j) {
                        const float d = v.scale * v.vector[j];
                        b.added[j] += d;
                        for (auto& [position, patch] : b.patched) patch[j] += d;
                    }
                } else {
                    checkIndex(where, "position", v.position, config.contextLength, "n_positions");
                    checkVector(where, v.vector, config);
                    b.patched[v.position] = v.vector;
                }
            },
            list[i]);
    }
}

const BlockInterventions* InterventionPlan::block(int layer) const {
    const auto it = blocks_.find(layer);
    return it == blocks_.end() ? nullptr : &it->second;
}

}  // namespace gpt2
