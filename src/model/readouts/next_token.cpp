#include "model/readouts/next_token.h"

#include <algorithm>

#include "model/ops/pointwise.h"
#include "util/error.h"

namespace gpt2 {

// seen = the sequence's tokens (the repetition penalty); the next token = a draw of the sampling
// asked for, from the logits as penalised (ops/sampler.h): candidates for searches of one
// candidate, else chosen; ids[next] = its id.
NextToken::NextToken(const ReadoutDecl& d)
    : model_(d.model),
      logits_(d.logits),
      candidates_(d.activations.add("top-k candidates", kMaxTopk, 4)),  // [k, (logit, id)]
      chosen_(d.activations.add("chosen token", 1, 4)),                 // [1, (key, id)]
      sampler_(std::make_unique<SamplerOp>(d.model.programs(), d.logits, d.ids, d.topk.seen,
                                           d.activations.add("seen tokens scratch", 1, d.topk.seen.layout().cols),
                                           d.topk.allowed, d.topk.blocks, d.topk.heads, candidates_, chosen_,
                                           d.model.config().vocabSize, d.topk.ranksPerFragment)),
      candidateToken_(chosenTokenPass(d.model.programs(), d.ids, candidates_)),
      chosenToken_(chosenTokenPass(d.model.programs(), d.ids, chosen_)),
      allowed_(d.topk.allowed),
      reads_(d.model.readback()) {
    model_.listen(this);
}

NextToken::~NextToken() = default;

std::vector<float> NextToken::logits() {
    requestLogits();
    return takeLogits();
}

std::vector<NextToken::Candidate> NextToken::topCandidates(int k) {
    requestCandidates(k);
    return takeCandidates();
}

void NextToken::requestLogits() {
    if (model_.lastPosition() < 0) fail("logits: nothing has been run yet");
    reads_.start(ReadQueue::Kind::Logits, logits_, 1);
}

std::vector<float> NextToken::takeLogits() {
    std::vector<float> values = reads_.take(ReadQueue::Kind::Logits, "takeLogits");
    values.resize(std::size_t(model_.config().vocabSize));
    return values;
}

void NextToken::requestCandidates(int k) {
    if (model_.lastPosition() < 0) fail("topCandidates: nothing has been run yet");
    const int vocab = model_.config().vocabSize;
    if (k < 1 || k > kMaxTopk || k > vocab)
        fail("topCandidates: k must be in [1, ", std::min(kMaxTopk, vocab), "], got ", k);
    sampler_->topk().run(k);
    lastTokenPass_ = &candidateToken_;
    reads_.start(ReadQueue::Kind::Candidates, candidates_, k);
}

void NextToken::requestToken(const TokenSampling& sampling, int draw) {
    const int last = model_.lastPosition();
    if (last < 0) fail("requestToken: nothing has been run yet");
    if (sampling.topK < 0 || sampling.topK > kMaxTopk)
        fail("requestToken: top-k must be in [0, ", kMaxTopk, "], got ", sampling.topK);
    if (sampling.repetitionPenalty != 1.0f && seenThrough_ < last) {
        sampler_->markSeen(seenThrough_ + 1, last + 1);
        seenThrough_ = last;
    }
    if (sampling.allowed && sampling.allowedVersion != uploadedAllowed_) {
        // Each word's halves as two floats: 16 bits are exact in a float on every GPU.
        std::vector<float> halves(std::size_t(allowed_.layout().cols), 0.0f);
        for (std::size_t w = 0; w < sampling.allowed->size() && 2 * w + 1 < halves.size(); ++w) {
            halves[2 * w] = float((*sampling.allowed)[w] & 0xFFFFu);
            halves[2 * w + 1] = float((*sampling.allowed)[w] >> 16);
        }
        allowed_.uploadRows(0, 1, halves.data());
        uploadedAllowed_ = sampling.allowedVersion;
    }
    Texture& result = sampler_->run(sampling, draw);
    lastTokenPass_ = &result == &chosen_ ? &chosenToken_ : &candidateToken_;
    reads_.start(ReadQueue::Kind::Token, result, 1);
}

int NextToken::takeToken() { return int(reads_.take(ReadQueue::Kind::Token, "takeToken")[1]); }

std::vector<NextToken::Candidate> NextToken::takeCandidates() {
    const int k = reads_.oldestRows();
    const std::vector<float> rows = reads_.take(ReadQueue::Kind::Candidates, "takeCandidates");
    std::vector<Candidate> out;
    for (int r = 0; r < k; ++r) out.push_back({int(rows[std::size_t(r) * 4 + 1]), rows[std::size_t(r) * 4]});
    return out;
}

void NextToken::writeChosenId(int pos) {
    if (!lastTokenPass_) fail("writeChosenId: no token has been requested");
    lastTokenPass_->run(pos, pos + 1);
}

}  // namespace gpt2
