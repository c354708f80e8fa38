#pragma once
// The next-token choice and the readouts of one model, owned beside it by whoever owns it (the
// Engine): declared at the site the model's constructor hands over, reading it through its
// ForwardView only. They share the rows the output head scores (interleaved, so that the head
// computes whole row groups) and the top-k block lists.
#include <cstdint>

#include "model/readouts/next_token.h"
#include "model/readouts/attention_readout.h"
#include "model/readouts/hidden_states.h"
#include "model/readouts/live_capture.h"
#include "model/readouts/token_log_probs.h"

namespace gpt2 {

// They register with the model (ForwardView::listen, observeChunks) and never unregister: they live
// as long as the model they read, and neither's destructor calls the other.
class Readouts {
public:
    explicit Readouts(const ReadoutSite& site);

    NextToken& next() { return next_; }
    AttentionReadout& attention() { return attention_; }
    TokenLogProbs& tokenLogProbs() { return tokenLogProbs_; }
    HiddenStates& hiddenStates() { return hiddenStates_; }
    LiveCapture& live() { return live_; }
    // Bytes of the textures they hold outside the model's declared ones (live capture's attention).
    std::int64_t gpuBytes() const { return live_.gpuBytes(); }

private:
    // Each keeps what it reads of `decl`, none the declaration itself.
    explicit Readouts(const ReadoutDecl& decl);

    NextToken next_;
    AttentionReadout attention_;
    TokenLogProbs tokenLogProbs_;
    HiddenStates hiddenStates_;
    LiveCapture live_;
};

}  // namespace gpt2
