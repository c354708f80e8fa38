#include "engine/engine.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "engine/cpu_runner.h"
#include "engine/gpu_runner.h"
#include "grammar/json_schema.h"
#include "model/weight_ingest.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {

Engine::Engine(const ModelConfig& config, const ModelOptions& options,
               const std::vector<const ModelFileHeader*>& files) {
    makeModel(config, options, files);
}

void Engine::makeModel(const ModelConfig& config, const ModelOptions& options,
                       const std::vector<const ModelFileHeader*>& files) {
    if (options.backend == Backend::Cpu)
        runner_ = std::make_unique<CpuRunner>(config, options, files);
    else
        runner_ = std::make_unique<GpuRunner>(config, options, blockFormats(config, files));
}

std::int64_t Engine::plannedBytes(const ModelConfig& config, const ModelOptions& options,
                                  const std::vector<const ModelFileHeader*>& files) {
    if (options.backend == Backend::Cpu)
        return CpuModel::plannedBytes(config, options.kvCache == TexelFormat::Float16, files);
    return plannedGpuBytes(config, options, blockFormats(config, files));
}

std::int64_t Engine::plannedGpuBytes(const ModelConfig& config, const ModelOptions& options,
                                     const BlockFormats& blocks) {
    return GpuRunner::plannedBytes(config, options, blocks);
}

void Engine::finishLoad(const std::string& label) { runner_->finishLoad(label); }

std::vector<const StoredTensor*> Engine::wantedTensors(const ModelFileHeader& file) const {
    std::vector<const StoredTensor*> wanted;
    for (const StoredTensor& t : file.tensors)
        if (runner_->wants(t.name)) wanted.push_back(&t);
    return wanted;
}

void Engine::forward(const std::vector<int>& ids, int pos0) {
    runner_->beginForward(ids, pos0);
    while (!runner_->runChunk()) {
    }
}

Tokenizer fileTokenizer(const ModelFileHeader& header) {
    requireWholeModel(header);
    return Tokenizer::fromTokensAndMerges(header.tokens, header.merges, header.label);
}

Engine::Engine(const std::string& modelPath, const ModelOptions& options) {
    const ModelOnDisk model = openModelOnDisk(modelPath);
    makeModel(model.config, options, model.headers());
    for (const auto& file : model.files)
        for (const StoredTensor* tensor : wantedTensors(file->header()))
            ingest(file->header(), *tensor, file->read(*tensor));
    finishLoad(modelPath);
    const std::string vocab = joinPath(modelPath, "vocab.json"), merges = joinPath(modelPath, "merges.txt");
    if (model.oneFile)
        setTokenizer(fileTokenizer(model.files.front()->header()));
    else if (fileExists(vocab) && fileExists(merges))
        setTokenizer(Tokenizer::fromFiles(vocab, merges));
}

void Engine::setTokenizer(Tokenizer tokenizer) {
    if (tokenizer.vocabSize() > config().vocabSize)
        fail("the tokenizer has ", tokenizer.vocabSize(), " tokens but the model only ", config().vocabSize,
             "; vocab.json does not belong to this model");
    tokenizer_.emplace(std::move(tokenizer));
    patterns_.clear();
    tokenTrie_.reset();
}

const Tokenizer& Engine::tokenizer() const {
    if (!tokenizer_) fail("no tokenizer: the model folder has no vocab.json and merges.txt");
    return *tokenizer_;
}

std::shared_ptr<CompiledPattern> Engine::compiledPattern(PatternKind kind, const std::string& text) {
    constexpr std::size_t kKept = 8;
    const auto found = patterns_.find({kind, text});
    if (found != patterns_.end()) return found->second;
    if (!tokenTrie_) {
        if (!tokenizer_) fail("regex and jsonSchema need the model's tokenizer (vocab.json and merges.txt)");
        // The model's ids; any beyond the tokenizer's are never text.
        std::vector<std::string> tokens(std::size_t(config().vocabSize));
        for (int id = 0; id < std::min(config().vocabSize, tokenizer_->vocabSize()); ++id)
            tokens[std::size_t(id)] = tokenizer_->tokenBytes(id);
        tokenTrie_ = std::make_unique<TokenTrie>(tokens, tokenizer_->endOfTextId());
    }
    auto compiled = kind == PatternKind::Regex
                        ? std::make_shared<CompiledPattern>(parseRegex(text), "regex /" + text + "/", *tokenTrie_)
                        : std::make_shared<CompiledPattern>(jsonSchemaPattern(text), "jsonSchema", *tokenTrie_);
    if (patterns_.size() >= kKept) patterns_.clear();
    return patterns_.emplace(std::make_pair(kind, text), std::move(compiled)).first->second;
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

void Engine::setInterventions(const std::vector<Intervention>& list) {
    InterventionPlan plan(list, config());
    if (plan == interventions_) return;
    runner_->setInterventions(plan);
    interventions_ = std::move(plan);
    endSequence();
}

void Engine::endSequence() {
    tokens_.clear();
    prefilling_.clear();
    speculative_ = 0;
}

void Engine::beginPrefill(const std::vector<int>& ids) {
    startSequence(ids, "prefill");
    runner_->beginForward(ids, 0);
    prefilling_ = ids;
}

bool Engine::prefillStep() {
    if (prefilling_.empty()) fail("prefillStep: no prefill in progress (call beginPrefill)");
    if (!runner_->runChunk()) return false;
    tokens_ = std::move(prefilling_);
    prefilling_.clear();
    return true;
}

void Engine::step(int id) {
    if (tokens_.empty()) fail("step: call prefill with a prompt first");
    if (int(tokens_.size()) >= config().contextLength)
        fail("step: the sequence already fills the model's context of ", config().contextLength, " tokens");
    speculative_ = 0;
    forward({id}, int(tokens_.size()));
    tokens_.push_back(id);
}

void Engine::stepFromChosenToken() {
    const int pos = int(tokens_.size()) + speculative_;
    if (tokens_.empty()) fail("stepFromChosenToken: call prefill with a prompt first");
    if (pos >= config().contextLength) fail("stepFromChosenToken: position ", pos, " is past the model's context");
    runner_->forwardChosenToken(pos);
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
        forward({tokens_.back()}, int(tokens_.size()) - 1);
    }
    return runner_->logits();
}

PerplexityResult Engine::perplexity(const std::vector<int>& ids, int window) {
    endSequence();
    return scorePerplexity(*runner_, ids, window);
}

std::vector<std::vector<LensCell>> Engine::lens(const std::vector<int>& ids, int k) {
    startSequence(ids, "lens");
    auto cells = runner_->lens(ids, k);
    tokens_ = ids;
    return cells;
}

std::vector<float> Engine::hiddenStates(const std::vector<int>& ids, int layer) {
    startSequence(ids, "hiddenStates");
    return runner_->hiddenStates(ids, layer);
}

std::vector<float> Engine::attention(int layer) {
    if (tokens_.empty()) fail("attention: no sequence yet; call prefill first");
    return runner_->attention(tokens_, layer);
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
            fail("prompt (", prompt.size(), " tokens) + ", options.maxNewTokens,
                 " new tokens exceed the model's context of ", context,
                 " (enable the sliding window or shorten the prompt)");
        return prompt;
    }
    if (int(prompt.size()) <= context) return prompt;
    return std::vector<int>(prompt.end() - context / 2, prompt.end());
}
}  // namespace

TokenSampling gpuSampling(const SamplingOptions& s, int vocab, std::uint64_t seed) {
    return {s.temperature, s.topK && *s.topK < vocab ? *s.topK : 0, s.topP, s.repetitionPenalty, seed};
}

bool runnerDraws(const ModelRunner& runner, const TokenSampling& s) {
    return runner.drawsTokens() && (s.greedy() || s.topK <= kMaxTopk);
}

Generation::Generation(Engine& engine, const std::vector<int>& prompt, const GenerateOptions& options)
    : engine_(engine),
      options_(options),
      capture_(engine.runner(), options.capture),
      sampler_(options.sampling),
      stops_(options.stop) {
    const std::vector<int> kept = promptWithinContext(prompt, options, engine.config().contextLength);
    const int vocab = engine.config().vocabSize;
    if (!options.logitBias.empty()) logitBias_.assign(std::size_t(vocab), 0.0f);
    for (const auto& [id, bias] : options.logitBias) {
        if (id < 0 || id >= vocab) fail("logitBias: token id ", id, " is outside the vocabulary of ", vocab);
        if (std::isnan(bias) || (std::isinf(bias) && bias > 0))
            fail("logitBias: token ", id, " has bias ", bias, ", not a number below infinity");
        logitBias_[std::size_t(id)] = std::max(bias, kBannedLogit);
    }
    // Bans reach the GPU's draws as the allowed tokens' bits; a bias that moves a logit by a finite
    // amount makes the engine draw from the logits (read back whole) instead.
    bool shifts = false;
    for (std::size_t id = 0; id < logitBias_.size(); ++id) {
        if (logitBias_[id] <= kBannedLogit) {
            if (unbanned_.empty()) unbanned_.assign(std::size_t(vocab + 31) / 32, ~0u);
            unbanned_[id / 32] &= ~(1u << (id % 32));
        }
        shifts = shifts || (logitBias_[id] != 0.0f && logitBias_[id] > kBannedLogit);
    }
    gpuSampling_ = gpuSampling(options.sampling, engine.config().vocabSize, sampler_.seed());
    cpuPicks_ = !runnerDraws(engine.runner(), gpuSampling_) || shifts;
    if (cpuPicks_) gpuSampling_.topK = 0;
    if (!unbanned_.empty()) setAllowed(unbanned_);
    if (!options.stop.empty() && !engine.hasTokenizer())
        fail("stop strings need a tokenizer (vocab.json and merges.txt)");
    if (engine.hasTokenizer()) decoder_.emplace(engine.tokenizer());
    if (options.regex && options.jsonSchema) fail("give regex or jsonSchema, not both");
    if (options.regex)
        constraint_.emplace(engine.compiledPattern(Engine::PatternKind::Regex, *options.regex));
    else if (options.jsonSchema)
        constraint_.emplace(engine.compiledPattern(Engine::PatternKind::JsonSchema, *options.jsonSchema));
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
    if (prefilling_) {
        if (!wait && !engine_.chunkDone()) return std::nullopt;
        if (!engine_.prefillStep()) return std::nullopt;
        prefilling_ = false;
        constrain();
        if (done_) return std::nullopt;
        request(cpuPicks_);
        speculate();
        return std::nullopt;
    }
    if (!wait && !engine_.runner().readReady()) return std::nullopt;
    --reading_;
    // Reads arrive in order: this one is of draw ids_.size().
    const int draw = int(ids_.size());
    if (readingLogits_) {
        readingLogits_ = false;
        std::vector<TokenLogit> all;
        const std::vector<float> logits = engine_.runner().takeLogits();
        for (std::size_t i = 0; i < logits.size(); ++i) all.push_back({int(i), logits[i]});
        return emit(sampler_.pick(std::move(all), engine_.tokens(), draw, cpuBias()));
    }
    const int id = engine_.runner().takeToken();
    if (id < 0) {
        // Top-p alone whose mass the GPU's candidates did not reach: no step ran ahead of it.
        request(true);
        return std::nullopt;
    }
    return emit(id);
}

void Generation::request(bool logits) {
    ModelRunner& runner = engine_.runner();
    if (logits)
        runner.requestLogits();
    else
        runner.requestToken(gpuSampling_, int(ids_.size()) + reading_);
    readingLogits_ = logits;
    ++reading_;
}

void Generation::constrain() {
    if (!constraint_) return;
    if (constraint_->finished()) {
        done_ = true;
        reason_ = StopReason::PatternComplete;
        return;
    }
    const std::vector<std::uint32_t>& allowed = constraint_->allowed();
    if (unbanned_.empty()) return setAllowed(allowed);
    combined_.resize(allowed.size());
    bool any = false;
    for (std::size_t w = 0; w < allowed.size(); ++w) any = (combined_[w] = allowed[w] & unbanned_[w]) != 0 || any;
    if (!any) fail("logitBias bans every token the ", options_.regex ? "regex" : "jsonSchema", " allows here");
    setAllowed(combined_);
}

void Generation::setAllowed(const std::vector<std::uint32_t>& allowed) {
    static std::atomic<int> versions{0};
    gpuSampling_.allowed = &allowed;
    gpuSampling_.allowedVersion = ++versions;
}

std::vector<float> Generation::cpuBias() const {
    if (!gpuSampling_.allowed) return logitBias_;
    const std::vector<std::uint32_t>& allowed = *gpuSampling_.allowed;
    std::vector<float> bias = logitBias_;
    bias.resize(std::size_t(engine_.config().vocabSize), 0.0f);
    for (std::size_t id = 0; id < bias.size(); ++id)
        if (!((allowed[id / 32] >> (id % 32)) & 1u)) bias[id] = kBannedLogit;
    return bias;
}

void Generation::speculate() {
    const bool final = !cpuPicks_ && !gpuSampling_.mayDecline();
    const int pos = int(engine_.tokens().size()) + engine_.speculative();
    const bool wanted = int(ids_.size()) + reading_ < options_.maxNewTokens;
    if (!final || !wanted || reading_ >= NextToken::kMaxReads || pos >= engine_.config().contextLength) return;
    engine_.stepFromChosenToken();
    // A constrained draw needs the tokens its predecessor allows, known once that one is read: the
    // step runs ahead all the same, and emit() draws from it.
    if (!constraint_) request(false);
}

std::optional<GeneratedToken> Generation::emit(int id) {
    const int endOfText = engine_.hasTokenizer() ? engine_.tokenizer().endOfTextId() : 50256;
    auto heldBack = [&] { return decoder_ ? stops_.push(decoder_->flush()) + stops_.flush() : std::string(); };
    // This token goes at the end of the committed sequence; a step run ahead of it captured later.
    std::vector<CapturedPosition> captured = engine_.runner().takeCaptured(int(engine_.tokens().size()));
    // Under a constraint <|endoftext|> is allowed only where the text matches, and ends it.
    if ((options_.stopAtEndOfText || constraint_) && id == endOfText) {
        done_ = true;
        reason_ = StopReason::EndOfText;
        GeneratedToken token{id, heldBack(), std::move(captured)};
        if (token.text.empty()) return std::nullopt;
        return token;
    }
    ids_.push_back(id);
    if (constraint_) constraint_->accept(id);
    GeneratedToken token{id, decoder_ ? stops_.push(decoder_->push(id)) : std::string(), std::move(captured)};
    if (stops_.stopped()) {
        done_ = true;
        reason_ = StopReason::StopString;
    } else if (int(ids_.size()) == options_.maxNewTokens) {
        done_ = true;
        token.text += heldBack();
    } else if (constraint_ && constraint_->finished()) {
        done_ = true;
        reason_ = StopReason::PatternComplete;
        token.text += heldBack();
    } else if (engine_.speculative() > 0) {
        // The step for this token has run already; its successor's read is in flight, or under a
        // constraint is drawn now.
        engine_.commit(id);
        if (constraint_) {
            constrain();
            request(cpuPicks_);
        }
        speculate();
    } else if (engine_.append(id, options_.slideWindow)) {
        prefilling_ = true;
    } else {
        // The next token's read is in flight while the caller handles this one.
        constrain();
        request(cpuPicks_);
        speculate();
    }
    return token;
}

LogitsRun::LogitsRun(Engine& engine, const std::vector<int>& ids) : engine_(engine) { engine.beginPrefill(ids); }

bool LogitsRun::poll() {
    if (prefilling_) {
        if (!engine_.chunkDone() || !engine_.prefillStep()) return false;
        prefilling_ = false;
        engine_.runner().requestLogits();
        return false;
    }
    return engine_.runner().readReady();
}

std::vector<float> LogitsRun::take() {
    if (prefilling_) fail("LogitsRun::take: the prompt is still being run; poll() until it returns true");
    return engine_.runner().takeLogits();
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
