#include "model/read_queue.h"

#include "util/error.h"

namespace gpt2 {

void ReadQueue::start(Kind kind, Texture& texture, int rows) {
    if (inFlight_ == kMaxReads) fail("at most ", kMaxReads, " reads may be in flight; take one first");
    Pending& r = reads_[(first_ + inFlight_) % kMaxReads];
    r.kind = kind;
    r.rows = rows;
    r.read.start(texture, 0, rows);
    ++inFlight_;
}

bool ReadQueue::ready() const { return inFlight_ > 0 && reads_[first_].read.ready(); }

std::vector<float> ReadQueue::take(Kind kind, const char* caller) {
    Pending& r = reads_[first_];
    if (inFlight_ == 0 || r.kind != kind)
        fail(caller, ": the oldest read in flight is not of that kind (request it first, and take reads in order)");
    first_ = (first_ + 1) % kMaxReads;
    --inFlight_;
    return readback_.take(r.read);
}

void ReadQueue::dropAll() {
    for (Pending& r : reads_) r.read.drop();
    inFlight_ = 0;
}

}  // namespace gpt2
