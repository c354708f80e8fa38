#include "model/readouts/hidden_states.h"

#include "model/readouts/readout_checks.h"
#include "util/error.h"

namespace gpt2 {

std::vector<float> HiddenStates::run(const std::vector<int>& ids, int layer) {
    checkReadoutLayer("hiddenStates", layer, model_.config().layers);
    std::vector<float> out;
    model_.runSequence(ids, layer + 1, [&](int start, int n) {
        const std::vector<float> rows = model_.readback().rows(model_.residual(), start, n);
        out.insert(out.end(), rows.begin(), rows.end());
    });
    model_.endSequence();  // the later blocks did not run: no logits, and the cache holds no sequence
    return out;
}

}  // namespace gpt2
