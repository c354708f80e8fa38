#pragma once
// The next token of a forward: the last position's logits, its best candidates, or a token sampled on
// the GPU (ops/sampler.h), each read without waiting. The chosen id can also feed the next position
// without leaving the GPU (writeChosenId, then Gpt2Model::forwardWrittenToken).
#include <algorithm>
#include <memory>
#include <vector>

#include "model/ops/sampler.h"
#include "model/read_queue.h"
#include "model/readouts/readout_decl.h"

namespace gpt2 {

class NextToken : public SequenceListener {
public:
    explicit NextToken(const ReadoutDecl& decl);
    ~NextToken() override;
    NextToken(const NextToken&) = delete;
    NextToken& operator=(const NextToken&) = delete;

    // Logits of the last position forwarded: vocab_size floats.
    std::vector<float> logits();
    // The k largest of those logits, best first (ties: smaller id first), found on the GPU: reads
    // back k texels instead of the whole vocabulary. 1 <= k <= kMaxTopk.
    struct Candidate {
        int id;
        float logit;
    };
    std::vector<Candidate> topCandidates(int k);
    // The reads of the next token without waiting for the GPU: request...() runs the passes and
    // starts the read, readReady() polls the oldest read, take...() returns its result (waiting
    // natively if it is not ready). Up to kMaxReads reads may be in flight, taken in the order they
    // were started; a forward of a new sequence, or of a step with a known token, drops those never
    // taken.
    static constexpr int kMaxReads = ReadQueue::kMaxReads;
    void requestLogits();
    void requestCandidates(int k);
    // Draw number `draw` of `sampling` (ops/sampler.h) for the next position, the sequence so far
    // being the tokens the repetition penalty sees; takeToken() gives its id, or -1 where top-p alone
    // needs more candidates than the GPU lists (then read the logits).
    void requestToken(const TokenSampling& sampling, int draw);
    bool readReady() const { return reads_.ready(); }
    std::vector<float> takeLogits();
    std::vector<Candidate> takeCandidates();
    int takeToken();

    // Writes the id of the token last requested into the ids row of position `pos`.
    void writeChosenId(int pos);
    // Positions from `pos0` on are about to be rewritten: the repetition penalty forgets their tokens.
    void rewritingFrom(int pos0) override { seenThrough_ = std::min(seenThrough_, pos0 - 1); }
    // A run that voids the reads in flight (a new sequence, a readout's own run) drops them.
    void runStarting() override { reads_.dropAll(); }

private:
    ForwardView& model_;
    Texture& logits_;
    Texture& candidates_;
    Texture& chosen_;
    std::unique_ptr<SamplerOp> sampler_;
    Pass candidateToken_, chosenToken_;  // ids[pos] = the best candidate's id, or the chosen one's
    Pass* lastTokenPass_ = nullptr;      // of the last token requested: where its id is
    int seenThrough_ = -1;               // positions [0, seenThrough_] are marked for the repetition penalty
    Texture& allowed_;                   // the tokens constrained draws may take
    int uploadedAllowed_ = -1;           // the TokenSampling::allowedVersion it holds
    ReadQueue reads_;
};

}  // namespace gpt2
