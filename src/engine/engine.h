#pragma once
// The public C++ API: a loaded model plus the token sequence in its KV cache.
#include <memory>
#include <string>
#include <vector>

#include "model/gpt2_model.h"

namespace gpt2 {

class Engine {
public:
    // `modelDir`: a Hugging Face GPT-2 checkpoint folder. Needs a current GL context.
    Engine(const std::string& modelDir, const ModelOptions& options);

    const ModelConfig& config() const { return model_->config(); }
    Gpt2Model& model() { return *model_; }
    const std::vector<int>& tokens() const { return tokens_; }

    // Starts a new sequence with `ids` (one set of passes for all of them).
    void prefill(const std::vector<int>& ids);
    // Appends one token, reusing the KV cache: costs O(sequence length).
    void step(int id);
    // Logits after the last token of the sequence.
    std::vector<float> logits();
    // Attention probabilities of `layer` over the current sequence: heads x T x T.
    std::vector<float> attention(int layer);
    // Greedy continuation of `prompt`: the new ids only.
    std::vector<int> generateGreedy(const std::vector<int>& prompt, int maxNewTokens);

private:
    std::unique_ptr<Gpt2Model> model_;
    std::vector<int> tokens_;
};

int argmax(const std::vector<float>& values);

}  // namespace gpt2
