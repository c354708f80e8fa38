#pragma once
// Interventions a caller makes in the forward, TransformerLens's hooks as one list: each acts where
// its definition says, on every backend, inside the passes or kernels the forward already has.
//   AblateHead:    that head's output (its columns of the attention output, before attn.c_proj) is 0
//                  at every position (zero ablation of hook_z).
//   AblateNeurons: those MLP hidden units are 0 after the activation.
//   Steer:         scale * vector (n_embd) is added to the residual stream after block `layer`, at
//                  every position.
//   Patch:         the residual stream after block `layer` at `position` is replaced by `vector`.
// They compose in list order: a Steer after a Patch of the same block adds to the patched vector.
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "format/model_config.h"

namespace gpt2 {

struct AblateHead {
    int layer = 0, head = 0;
};
struct AblateNeurons {
    int layer = 0;
    std::vector<int> neurons;
};
struct Steer {
    int layer = 0;
    std::vector<float> vector;
    float scale = 1.0f;
};
struct Patch {
    int layer = 0, position = 0;
    std::vector<float> vector;
};
using Intervention = std::variant<AblateHead, AblateNeurons, Steer, Patch>;

// A list resolved for one model, block by block: what each block's passes need.
struct BlockInterventions {
    std::vector<bool> heads;                    // per head: ablated
    std::vector<bool> neurons;                  // per MLP hidden unit: ablated
    std::vector<float> added;                   // n_embd, summed steering (empty: none)
    std::map<int, std::vector<float>> patched;  // position -> the residual stream after the block

    // A block with none, for `config`.
    static BlockInterventions none(const ModelConfig& config);
    bool operator==(const BlockInterventions&) const = default;
};

class InterventionPlan {
public:
    InterventionPlan() = default;
    // Checks every item against `config` (its errors name the item: "interventions[2].steer: vector
    // has 700 values, expected n_embd 768") and resolves the list in order.
    InterventionPlan(const std::vector<Intervention>& list, const ModelConfig& config);

    bool empty() const { return blocks_.empty(); }
    // Block `layer`'s interventions, or null where it has none.
    const BlockInterventions* block(int layer) const;
    bool operator==(const InterventionPlan&) const = default;

private:
    std::map<int, BlockInterventions> blocks_;
};

}  // namespace gpt2
