#pragma once
// The gpt2-tiny fixture's prompts, loaded from reference.json.
#include <string>
#include <vector>

namespace gpt2::testing {

struct ReferencePrompt {
    std::string key;
    std::vector<int> ids;
    std::vector<float> lastLogits;
    std::vector<std::vector<int>> top5Ids;        // per position
    std::vector<std::vector<float>> top5Logits;   // per position
    std::vector<int> greedy;
    std::vector<float> greedyMargins;
    std::vector<float> attention;                 // p1 only: [layer][head][query][key] flattened
};

const std::vector<ReferencePrompt>& tinyPrompts();
std::string tinyModelDir();

}  // namespace gpt2::testing
