#pragma once
// Streams generated text while watching for stop strings: text that could be the start of a stop
// string is held back until it is known not to be, so a stop string is never emitted.
#include <string>
#include <vector>

namespace gpt2 {

class StopStringFilter {
public:
    explicit StopStringFilter(std::vector<std::string> stops);
    // Adds decoded text; returns what can be emitted now. After a stop string is seen, stopped()
    // is true and nothing from the stop string on is ever emitted.
    std::string push(const std::string& text);
    // What is still held back, once generation ends without a stop string.
    std::string flush();
    bool stopped() const { return stopped_; }

private:
    std::vector<std::string> stops_;
    std::string pending_;
    bool stopped_ = false;
};

}  // namespace gpt2
