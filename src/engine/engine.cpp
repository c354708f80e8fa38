#include "engine/engine.h"

#include <algorithm>

#include "format/checkpoint.h"
#include "util/error.h"

namespace gpt2 {

int argmax(const std::vector<float>& values) {
    return int(std::max_element(values.begin(), values.end()) - values.begin());
}

Engine::Engine(const std::string& modelDir, const ModelOptions& options) {
    const HuggingFaceCheckpoint checkpoint(modelDir);
    model_ = std::make_unique<Gpt2Model>(checkpoint.config(), options);
    model_->weights().uploadAll(checkpoint);
    model_->weights().checkComplete(modelDir);
}

void Engine::prefill(const std::vector<int>& ids) {
    if (ids.empty()) fail("prefill: the prompt has no tokens");
    if (int(ids.size()) > config().contextLength)
        fail("prefill: the prompt has ", ids.size(), " tokens, the model's context is ", config().contextLength);
    tokens_.clear();
    model_->forward(ids, 0);
    tokens_ = ids;
}

void Engine::step(int id) {
    if (tokens_.empty()) fail("step: call prefill with a prompt first");
    if (int(tokens_.size()) >= config().contextLength)
        fail("step: the sequence already fills the model's context of ", config().contextLength, " tokens");
    model_->forward({id}, int(tokens_.size()));
    tokens_.push_back(id);
}

std::vector<float> Engine::logits() { return model_->logits(); }

std::vector<float> Engine::attention(int layer) {
    if (tokens_.empty()) fail("attention: no sequence yet; call prefill first");
    return model_->attention(tokens_, layer);
}

std::vector<int> Engine::generateGreedy(const std::vector<int>& prompt, int maxNewTokens) {
    if (maxNewTokens < 0) fail("generate: max new tokens must be >= 0, got ", maxNewTokens);
    if (std::int64_t(prompt.size()) + maxNewTokens > config().contextLength + 1)
        fail("generate: prompt (", prompt.size(), " tokens) + ", maxNewTokens, " new tokens exceed the model's context of ",
             config().contextLength);
    std::vector<int> generated;
    if (maxNewTokens == 0) return generated;
    prefill(prompt);
    for (int i = 0; i < maxNewTokens; ++i) {
        generated.push_back(argmax(logits()));
        if (i + 1 < maxNewTokens) step(generated.back());
    }
    return generated;
}

}  // namespace gpt2
