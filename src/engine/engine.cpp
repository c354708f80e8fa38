#include "engine/engine.h"

#include <algorithm>

#include "format/checkpoint.h"
#include "format/packed_model.h"
#include "model/weight_file.h"
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

Engine::Engine(std::unique_ptr<Gpt2Model> model) : model_(std::move(model)) { model_->finishPrograms(); }

Engine::Engine(const std::string& modelPath, const ModelOptions& options) {
    if (fileExists(modelPath)) {
        // A packed model file: config, tokenizer and texel streams in one file.
        const SafetensorsFile file(modelPath);
        const PackedMetadata meta = parsePackedMetadata(file.header());
        model_ = std::make_unique<Gpt2Model>(meta.config, options);
        WeightFile weights(file.header(), model_->weights());
        for (const TensorInfo* info : weights.wanted()) weights.upload(*info, file.readRaw(*info).data());
        weights.finish();
        model_->weights().checkComplete(modelPath);
        model_->finishPrograms();
        if (!meta.vocabJson.empty()) setTokenizer(Tokenizer::fromJsonAndMerges(meta.vocabJson, meta.mergesText));
        return;
    }
    const HuggingFaceCheckpoint checkpoint(modelPath);
    model_ = std::make_unique<Gpt2Model>(checkpoint.config(), options);
    model_->weights().uploadAll(checkpoint);
    model_->weights().checkComplete(modelPath);
    model_->finishPrograms();
    const std::string vocab = joinPath(modelPath, "vocab.json"), merges = joinPath(modelPath, "merges.txt");
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
    beginPrefill(ids);
    while (!prefillStep()) {
    }
}

void Engine::startSequence(const std::vector<int>& ids, const char* what) {
    if (ids.empty()) fail(what, ": the prompt has no tokens");
    if (int(ids.size()) > config().contextLength)
        fail(what, ": the prompt has ", ids.size(), " tokens, the model's context is ", config().contextLength);
    endSequence();
}

void Engine::endSequence() {
    tokens_.clear();
    prefilling_.clear();
    speculative_ = 0;
}

void Engine::beginPrefill(const std::vector<int>& ids) {
    startSequence(ids, "prefill");
    model_->beginForward(ids, 0);
    prefilling_ = ids;
}

bool Engine::prefillStep() {
    if (prefilling_.empty()) fail("prefillStep: no prefill in progress (call beginPrefill)");
    if (!model_->runChunk()) return false;
    tokens_ = std::move(prefilling_);
    prefilling_.clear();
    return true;
}

void Engine::step(int id) {
    if (tokens_.empty()) fail("step: call prefill with a prompt first");
    if (int(tokens_.size()) >= config().contextLength)
        fail("step: the sequence already fills the model's context of ", config().contextLength, " tokens");
    speculative_ = 0;
    model_->forward({id}, int(tokens_.size()));
    tokens_.push_back(id);
}

void Engine::stepFromTopCandidate() {
    const int pos = int(tokens_.size()) + speculative_;
    if (tokens_.empty()) fail("stepFromTopCandidate: call prefill with a prompt first");
    if (pos >= config().contextLength) fail("stepFromTopCandidate: position ", pos, " is past the model's context");
    model_->forwardTopCandidate(pos);
    ++speculative_;
}

void Engine::commit(int id) {
    if (speculative_ == 0) fail("commit: no step ran ahead of its token");
    tokens_.push_back(id);
    --speculative_;
}

std::vector<float> Engine::logits() {
    // A generation that ended with a step run ahead left the model one position past the sequence.
    if (speculative_ > 0) {
        speculative_ = 0;
        model_->forward({tokens_.back()}, int(tokens_.size()) - 1);
    }
    return model_->logits();
}

PerplexityResult Engine::perplexity(const std::vector<int>& ids, int window) {
    endSequence();
    return scorePerplexity(*model_, ids, window);
}

std::vector<std::vector<Gpt2Model::LensCell>> Engine::lens(const std::vector<int>& ids, int k) {
    startSequence(ids, "lens");
    auto cells = model_->lens(ids, k);
    tokens_ = ids;
    return cells;
}

std::vector<float> Engine::hiddenStates(const std::vector<int>& ids, int layer) {
    startSequence(ids, "hiddenStates");
    return model_->hiddenStates(ids, layer);
}

std::vector<float> Engine::attention(int layer) {
    if (tokens_.empty()) fail("attention: no sequence yet; call prefill first");
    return model_->attention(tokens_, layer);
}

namespace {
// The GPU's top candidates hold every token greedy or top-k can choose, unless a repetition penalty
// may reorder them; then all logits are read.
bool candidatesFromGpu(const SamplingOptions& s) {
    return s.repetitionPenalty == 1.0f && (s.greedy() || (s.topK && *s.topK <= Gpt2Model::kMaxCandidates));
}
}  // namespace

void Engine::requestCandidates(const SamplingOptions& s) {
    if (candidatesFromGpu(s))
        model_->requestCandidates(s.greedy() ? 1 : std::min(*s.topK, config().vocabSize));
    else
        model_->requestLogits();
}

std::vector<TokenLogit> Engine::takeCandidates(const SamplingOptions& s) {
    std::vector<TokenLogit> out;
    if (candidatesFromGpu(s)) {
        for (const auto& c : model_->takeCandidates()) out.push_back({c.id, c.logit});
    } else {
        const auto logits = model_->takeLogits();
        for (std::size_t i = 0; i < logits.size(); ++i) out.push_back({int(i), logits[i]});
    }
    return out;
}

bool Engine::append(int id, bool slideWindow) {
    const int context = config().contextLength;
    if (int(tokens_.size()) < context) {
        step(id);
        return false;
    }
    if (!slideWindow) fail("the sequence fills the model's context of ", context, " tokens");
    std::vector<int> kept(tokens_.end() - (context / 2 - 1), tokens_.end());
    kept.push_back(id);
    beginPrefill(kept);
    return true;
}

namespace {
std::vector<int> promptWithinContext(const std::vector<int>& prompt, const GenerateOptions& options, int context) {
    validateSampling(options.sampling);
    if (options.maxNewTokens < 0) fail("maxNewTokens must be 0 or more, got ", options.maxNewTokens);
    if (prompt.empty()) fail("the prompt is empty: give at least one token (e.g. <|endoftext|>)");
    if (!options.slideWindow) {
        if (std::int64_t(prompt.size()) + options.maxNewTokens > context + 1)
            fail("prompt (", prompt.size(), " tokens) + ", options.maxNewTokens, " new tokens exceed the model's context of ",
                 context, " (enable the sliding window or shorten the prompt)");
        return prompt;
    }
    if (int(prompt.size()) <= context) return prompt;
    return std::vector<int>(prompt.end() - context / 2, prompt.end());
}
}  // namespace

Generation::Generation(Engine& engine, const std::vector<int>& prompt, const GenerateOptions& options)
    : engine_(engine), options_(options), capture_(engine.model(), options.capture), sampler_(options.sampling), stops_(options.stop) {
    const std::vector<int> kept = promptWithinContext(prompt, options, engine.config().contextLength);
    if (!options.stop.empty() && !engine.hasTokenizer()) fail("stop strings need a tokenizer (vocab.json and merges.txt)");
    if (engine.hasTokenizer()) decoder_.emplace(engine.tokenizer());
    done_ = options.maxNewTokens == 0;
    if (!done_) engine.beginPrefill(kept);
}

void Generation::cancel() {
    if (!done_) reason_ = StopReason::Cancelled;
    done_ = true;
}

std::optional<GeneratedToken> Generation::next() {
    while (!done_)
        if (auto token = advance(true)) return token;
    return std::nullopt;
}

std::optional<GeneratedToken> Generation::poll() { return done_ ? std::nullopt : advance(false); }

std::optional<GeneratedToken> Generation::advance(bool wait) {
    Gpt2Model& model = engine_.model();
    if (prefilling_) {
        if (!wait && !model.chunkDone()) return std::nullopt;
        if (!engine_.prefillStep()) return std::nullopt;
        prefilling_ = false;
        engine_.requestCandidates(options_.sampling);
        reading_ = 1;
        speculate();
        return std::nullopt;
    }
    if (!wait && !model.readReady()) return std::nullopt;
    --reading_;
    const int id = sampler_.pick(engine_.takeCandidates(options_.sampling), engine_.tokens());
    return emit(id);
}

void Generation::speculate() {
    const SamplingOptions& s = options_.sampling;
    const bool gpuToken = s.greedy() && s.repetitionPenalty == 1.0f;
    const int pos = int(engine_.tokens().size()) + engine_.speculative();
    const bool wanted = int(ids_.size()) + reading_ < options_.maxNewTokens;
    if (!gpuToken || !wanted || reading_ >= Gpt2Model::kMaxReads || pos >= engine_.config().contextLength) return;
    engine_.stepFromTopCandidate();
    engine_.requestCandidates(s);
    ++reading_;
}

std::optional<GeneratedToken> Generation::emit(int id) {
    const int endOfText = engine_.hasTokenizer() ? engine_.tokenizer().endOfTextId() : 50256;
    auto heldBack = [&] { return decoder_ ? stops_.push(decoder_->flush()) + stops_.flush() : std::string(); };
    // This token goes at the end of the committed sequence; a step run ahead of it captured later.
    std::vector<Gpt2Model::CapturedPosition> captured = engine_.model().takeCaptured(int(engine_.tokens().size()));
    if (options_.stopAtEndOfText && id == endOfText) {
        done_ = true;
        reason_ = StopReason::EndOfText;
        GeneratedToken token{id, heldBack(), std::move(captured)};
        if (token.text.empty()) return std::nullopt;
        return token;
    }
    ids_.push_back(id);
    GeneratedToken token{id, decoder_ ? stops_.push(decoder_->push(id)) : std::string(), std::move(captured)};
    if (stops_.stopped()) {
        done_ = true;
        reason_ = StopReason::StopString;
    } else if (int(ids_.size()) == options_.maxNewTokens) {
        done_ = true;
        token.text += heldBack();
    } else if (engine_.speculative() > 0) {
        // The step for this token has run already; its successor's read is in flight.
        engine_.commit(id);
        speculate();
    } else if (engine_.append(id, options_.slideWindow)) {
        prefilling_ = true;
    } else {
        // The next token's read is in flight while the caller handles this one.
        engine_.requestCandidates(options_.sampling);
        ++reading_;
        speculate();
    }
    return token;
}

LogitsRun::LogitsRun(Engine& engine, const std::vector<int>& ids) : engine_(engine) { engine.beginPrefill(ids); }

bool LogitsRun::poll() {
    Gpt2Model& model = engine_.model();
    if (prefilling_) {
        if (!model.chunkDone() || !engine_.prefillStep()) return false;
        prefilling_ = false;
        model.requestLogits();
        return false;
    }
    return model.readReady();
}

std::vector<float> LogitsRun::take() {
    if (prefilling_) fail("LogitsRun::take: the prompt is still being run; poll() until it returns true");
    return engine_.model().takeLogits();
}

GenerateResult Engine::generate(const std::vector<int>& prompt, const GenerateOptions& options,
                                const std::function<bool(const GeneratedToken&)>& onToken) {
    Generation generation(*this, prompt, options);
    GenerateResult result;
    while (auto token = generation.next()) {
        result.text += token->text;
        if (onToken && !onToken(*token)) generation.cancel();
    }
    result.ids = generation.ids();
    result.reason = generation.reason();
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
