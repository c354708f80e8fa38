#include "engine/engine.h"

#include <algorithm>

#include "engine/stop_strings.h"
#include "format/checkpoint.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {

const char* stopReasonName(StopReason reason) {
    switch (reason) {
        case StopReason::MaxTokens: return "max_tokens";
        case StopReason::EndOfText: return "end_of_text";
        case StopReason::StopString: return "stop_string";
        case StopReason::Cancelled: return "cancelled";
    }
    return "max_tokens";
}

Engine::Engine(const std::string& modelDir, const ModelOptions& options) {
    const HuggingFaceCheckpoint checkpoint(modelDir);
    model_ = std::make_unique<Gpt2Model>(checkpoint.config(), options);
    model_->weights().uploadAll(checkpoint);
    model_->weights().checkComplete(modelDir);
    const std::string vocab = joinPath(modelDir, "vocab.json"), merges = joinPath(modelDir, "merges.txt");
    if (fileExists(vocab) && fileExists(merges)) setTokenizer(Tokenizer::fromFiles(vocab, merges));
}

void Engine::setTokenizer(Tokenizer tokenizer) {
    if (tokenizer.vocabSize() > config().vocabSize)
        fail("the tokenizer has ", tokenizer.vocabSize(), " tokens but the model only ", config().vocabSize,
             "; vocab.json does not belong to this model");
    tokenizer_.emplace(std::move(tokenizer));
}

const Tokenizer& Engine::tokenizer() const {
    if (!tokenizer_) fail("no tokenizer: the model folder has no vocab.json and merges.txt");
    return *tokenizer_;
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

std::vector<TokenLogit> Engine::nextCandidates(const SamplingOptions& s) {
    std::vector<TokenLogit> out;
    // The GPU's top candidates hold every token greedy or top-k can choose, unless a repetition
    // penalty may reorder them; then all logits are read.
    const bool fromGpu = s.repetitionPenalty == 1.0f && (s.greedy() || (s.topK && *s.topK <= Gpt2Model::kMaxCandidates));
    if (fromGpu) {
        const int k = s.greedy() ? 1 : std::min(*s.topK, config().vocabSize);
        for (const auto& c : model_->topCandidates(k)) out.push_back({c.id, c.logit});
    } else {
        const auto logits = model_->logits();
        for (std::size_t i = 0; i < logits.size(); ++i) out.push_back({int(i), logits[i]});
    }
    return out;
}

void Engine::append(int id, bool slideWindow) {
    const int context = config().contextLength;
    if (int(tokens_.size()) < context) return step(id);
    if (!slideWindow) fail("the sequence fills the model's context of ", context, " tokens");
    std::vector<int> kept(tokens_.end() - (context / 2 - 1), tokens_.end());
    kept.push_back(id);
    prefill(kept);
}

GenerateResult Engine::generate(const std::vector<int>& promptIds, const GenerateOptions& options,
                                const std::function<bool(const GeneratedToken&)>& onToken) {
    validateSampling(options.sampling);
    if (options.maxNewTokens < 0) fail("maxNewTokens must be 0 or more, got ", options.maxNewTokens);
    if (promptIds.empty()) fail("the prompt is empty: give at least one token (e.g. <|endoftext|>)");
    if (!options.stop.empty() && !tokenizer_) fail("stop strings need a tokenizer (vocab.json and merges.txt)");
    const int context = config().contextLength;
    std::vector<int> prompt = promptIds;
    if (!options.slideWindow) {
        if (std::int64_t(prompt.size()) + options.maxNewTokens > context + 1)
            fail("prompt (", prompt.size(), " tokens) + ", options.maxNewTokens, " new tokens exceed the model's context of ",
                 context, " (enable the sliding window or shorten the prompt)");
    } else if (int(prompt.size()) > context) {
        prompt.erase(prompt.begin(), prompt.end() - context / 2);
    }

    GenerateResult result;
    if (options.maxNewTokens == 0) return result;
    Sampler sampler(options.sampling);
    std::optional<StreamDecoder> decoder;
    if (tokenizer_) decoder.emplace(*tokenizer_);
    StopStringFilter stops(options.stop);
    const int endOfText = tokenizer_ ? tokenizer_->endOfTextId() : 50256;

    prefill(prompt);
    for (int i = 0; i < options.maxNewTokens; ++i) {
        const int id = sampler.pick(nextCandidates(options.sampling), tokens_);
        if (options.stopAtEndOfText && id == endOfText) {
            result.reason = StopReason::EndOfText;
            // Text held back (an unfinished character, a possible stop-string start) goes out with it.
            GeneratedToken token{id, decoder ? stops.push(decoder->flush()) + stops.flush() : std::string()};
            result.text += token.text;
            if (onToken && !token.text.empty()) onToken(token);
            break;
        }
        result.ids.push_back(id);
        GeneratedToken token{id, decoder ? stops.push(decoder->push(id)) : std::string()};
        if (stops.stopped()) {
            result.reason = StopReason::StopString;
            result.text += token.text;
            if (onToken && !token.text.empty()) onToken(token);
            break;
        }
        const bool last = i + 1 == options.maxNewTokens;
        if (last && decoder) token.text += stops.push(decoder->flush()) + stops.flush();
        result.text += token.text;
        if (onToken && !onToken(token)) {
            result.reason = StopReason::Cancelled;
            break;
        }
        if (!last) append(id, options.slideWindow);
    }
    return result;
}

std::vector<int> Engine::generateGreedy(const std::vector<int>& prompt, int maxNewTokens) {
    GenerateOptions options;
    options.maxNewTokens = maxNewTokens;
    options.stopAtEndOfText = false;
    options.slideWindow = false;
    return generate(prompt, options).ids;
}

}  // namespace gpt2
