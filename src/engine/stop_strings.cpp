#include "engine/stop_strings.h"

#include <algorithm>

#include "util/error.h"

namespace gpt2 {

StopStringFilter::StopStringFilter(std::vector<std::string> stops) : stops_(std::move(stops)) {
    for (const auto& s : stops_)
        if (s.empty()) fail("stop strings must not be empty");
}

std::string StopStringFilter::push(const std::string& text) {
    if (stopped_) return "";
    pending_ += text;
    std::size_t first = std::string::npos;
    for (const auto& s : stops_) first = std::min(first, pending_.find(s));
    if (first != std::string::npos) {
        stopped_ = true;
        std::string out = pending_.substr(0, first);
        pending_.clear();
        return out;
    }
    // Hold back the longest tail of pending_ that is a proper prefix of some stop string.
    std::size_t hold = 0;
    for (const auto& s : stops_)
        for (std::size_t n = std::min(s.size() - 1, pending_.size()); n > hold; --n)
            if (pending_.compare(pending_.size() - n, n, s, 0, n) == 0) {
                hold = n;
                break;
            }
    std::string out = pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return out;
}

std::string StopStringFilter::flush() {
    std::string out;
    out.swap(pending_);
    return stopped_ ? "" : out;
}

}  // namespace gpt2
