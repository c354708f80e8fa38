#pragma once
// The model's reads of its results in flight, taken in the order they were started: up to kMaxReads
// at once, so greedy decode can start a step's read before the previous one has arrived.
#include <cstdint>
#include <vector>

#include "gl/async_read.h"
#include "model/readback.h"

namespace gpt2 {

class ReadQueue {
public:
    static constexpr int kMaxReads = 2;
    enum class Kind { Logits, Candidates, Token };
    // Reads are taken through `readback`, which counts them.
    explicit ReadQueue(Readback& readback) : readback_(readback) {}

    // Starts reading rows [0, rows) of `texture`; fails when kMaxReads are in flight.
    void start(Kind kind, Texture& texture, int rows);
    // Whether the oldest read has arrived. Never waits.
    bool ready() const;
    // The oldest read's rows (waiting natively if need be); fails, naming `caller`, when the oldest
    // read is not of `kind`.
    std::vector<float> take(Kind kind, const char* caller);
    // Rows of the oldest read in flight.
    int oldestRows() const { return reads_[first_].rows; }
    // Ends every read in flight without taking it.
    void dropAll();

private:
    struct Pending {
        AsyncRead read;
        Kind kind = Kind::Logits;
        int rows = 0;
    };
    Readback& readback_;
    Pending reads_[kMaxReads];
    int first_ = 0, inFlight_ = 0;
};

}  // namespace gpt2
