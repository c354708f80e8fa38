#pragma once
// The argument checks every backend's readouts make, each message written once.
#include <vector>

#include "util/error.h"

namespace gpt2 {

// `what` ("attention", "hiddenStates") of `layer` of a model of `layers` blocks.
inline void checkReadoutLayer(const char* what, int layer, int layers) {
    if (layer < 0 || layer >= layers) fail(what, ": layer ", layer, " outside [0, ", layers, ")");
}

// The lens's k (0: `fallback`), within [1, maxK].
inline int checkLensTopK(int k, int fallback, int maxK) {
    if (k == 0) k = fallback;
    if (k < 1 || k > maxK) fail("lens: top-k must be in [1, ", maxK, "], got ", k);
    return k;
}

inline void checkTokenLogProbsIds(const std::vector<int>& ids) {
    if (ids.size() < 2) fail("tokenLogProbs: needs at least 2 tokens (the first is only context), got ", ids.size());
}

}  // namespace gpt2
