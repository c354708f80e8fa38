#pragma once
// The public C++ API: a loaded model, its tokenizer, and the token sequence in its KV cache.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/perplexity.h"
#include "engine/sampling.h"
#include "engine/stop_strings.h"
#include "engine/model_runner.h"
#include "format/model_file.h"
#include "grammar/token_constraint.h"
#include "model/interventions.h"
#include "model/model_weights.h"
#include "model/ops/sampler.h"
#include "model/tuning.h"
#include "tokenizer/tokenizer.h"

namespace gpt2 {

// The generate options of options.json, with its defaults.
struct GenerateOptions {
    int maxNewTokens = defaults::maxNewTokens;
    SamplingOptions sampling;
    std::vector<std::string> stop;                     // stop strings (never part of the output)
    bool stopAtEndOfText = defaults::stopAtEndOfText;  // stop on <|endoftext|> (not part of the output)
    // Context policy: when the next token would not fit in n_positions, keep the last
    // n_positions / 2 tokens, prefill them again and go on. Off: such a request is an error.
    bool slideWindow = defaults::slideWindow;
    // Live views (LiveCapture::set): captured while the prompt and each step run, and handed
    // out with the token they lead to. A generation sets them for the model until the next one.
    Capture capture{defaults::lensTopK, defaults::attentionLayer, defaults::lensPositions};
    // Added to a token's logit after the repetition penalty, before the temperature (OpenAI's
    // logit_bias); kBannedLogit, or -infinity, bans it.
    std::vector<std::pair<int, float>> logitBias;
    // Constrained output: the text matches `regex` (grammar/regex_syntax.h), or is JSON that fits
    // `jsonSchema` (its JSON text, grammar/json_schema.h); each draw takes only the tokens that keep a
    // match possible, and generation ends where the match can go no further. Unset: free text.
    std::optional<std::string> regex;
    std::optional<std::string> jsonSchema;
};

struct GeneratedToken {
    int id;
    std::string text;  // complete UTF-8 text this token adds (may be empty)
    // With live views: what the positions run since the token before captured (the whole prompt
    // for the first token; after a sliding window, the window kept), each leading to this token.
    std::vector<CapturedPosition> captured = {};
};

enum class StopReason { MaxTokens, EndOfText, StopString, Cancelled, PatternComplete };

struct GenerateResult {
    std::vector<int> ids;  // the new tokens
    std::string text;      // their text, without a stop string
    StopReason reason = StopReason::MaxTokens;
};

// The tokenizer that a whole-model file carries (a GGUF file's tokenizer.ggml.tokens and merges).
Tokenizer fileTokenizer(const ModelFileHeader& header);

class Engine;

// `sampling` as the GPU's sampler takes it, drawn with `seed`: a top-k of the whole vocabulary
// (`vocab` tokens) or more is none.
TokenSampling gpuSampling(const SamplingOptions& sampling, int vocab, std::uint64_t seed);
// Whether `runner` draws tokens with `sampling` itself: a GPU, unless the top-k is longer than its
// searches list (then the engine draws from the logits).
bool runnerDraws(const ModelRunner& runner, const TokenSampling& sampling);

// One generation, a token at a time, so callers can stream, yield and cancel between tokens. Two
// ways to drive it: next() waits for the GPU (native callers); poll() never does, and does at most
// one prefill chunk per call (the web runtime calls it once per turn of the event loop).
class Generation {
public:
    // Validates the options; the prompt (or the part of it the context policy keeps) is prefilled
    // by the first calls of next() or poll().
    Generation(Engine& engine, const std::vector<int>& prompt, const GenerateOptions& options);
    // The next token, or nothing when generation has ended (then reason() says why). When
    // <|endoftext|> ends it, text held back comes in one last token with that id (not in ids()).
    std::optional<GeneratedToken> next();
    // Advances without waiting: issues the next prefill chunk once the GPU has finished the one
    // before, or takes the next token's candidates once their read has arrived. A token when one is
    // ready; otherwise nothing, and done() tells the end from work still under way.
    std::optional<GeneratedToken> poll();
    StopReason reason() const { return reason_; }
    bool done() const { return done_; }
    const std::vector<int>& ids() const { return ids_; }
    void cancel();

private:
    // The live views' capture (ModelRunner::setCapture) for as long as the generation lives:
    // whatever ends it, what runs next (a prefill, a benchmark) does not pay for the capture.
    class CaptureScope {
    public:
        CaptureScope(ModelRunner& runner, const Capture& capture) : runner_(runner) { runner.setCapture(capture); }
        ~CaptureScope() { runner_.endCapture(); }
        CaptureScope(const CaptureScope&) = delete;
        CaptureScope& operator=(const CaptureScope&) = delete;

    private:
        ModelRunner& runner_;
    };

    std::optional<GeneratedToken> advance(bool wait);
    std::optional<GeneratedToken> emit(int id);
    // Starts the read of the next token not yet requested: its id, drawn on the GPU, or all the
    // logits where the engine draws (the CPU backend, top-k beyond what the GPU lists, or top-p alone
    // that the GPU declined).
    void request(bool logits);
    // Before a constrained draw: the tokens the constraint allows, or the end where the text can go no
    // further.
    void constrain();
    // The tokens the next draws may take, under a version no mask uploaded before had.
    void setAllowed(const std::vector<std::uint32_t>& allowed);
    // What a draw on the CPU adds to each logit: the logit bias, and kBannedLogit where a token is not
    // allowed.
    std::vector<float> cpuBias() const;
    // Steps from the token the GPU chose: while a token's readback travels, the step that feeds it to
    // the model already runs (Engine::stepFromChosenToken), when another token will be needed, the
    // context has room and the GPU's choice is final.
    void speculate();

    Engine& engine_;
    GenerateOptions options_;
    CaptureScope capture_;
    Sampler sampler_;
    TokenSampling gpuSampling_;                  // the same options as the GPU takes them
    std::vector<float> logitBias_;               // the options' logitBias over the vocabulary (empty: none)
    std::vector<std::uint32_t> unbanned_;        // the tokens logitBias does not ban (empty: none banned)
    std::vector<std::uint32_t> combined_;        // a constraint's allowed tokens that are not banned
    std::optional<TokenConstraint> constraint_;  // regex or jsonSchema
    bool cpuPicks_ = false;       // the CPU backend, or top-k beyond what the GPU lists: every token from the logits
    bool readingLogits_ = false;  // the read in flight is of all the logits (at most one read then)
    std::optional<StreamDecoder> decoder_;
    StopStringFilter stops_;
    std::vector<int> ids_;
    StopReason reason_ = StopReason::MaxTokens;
    bool done_ = false;
    bool prefilling_ = true;  // else the next token is being read
    int reading_ = 0;         // tokens being read
};

// Runs `ids` as a new sequence and reads the last position's logits, polled like Generation::poll:
// at most one prefill chunk per poll(), never waiting for the GPU.
class LogitsRun {
public:
    LogitsRun(Engine& engine, const std::vector<int>& ids);
    // True once take() returns without waiting.
    bool poll();
    std::vector<float> take();

private:
    Engine& engine_;
    bool prefilling_ = true;
};

class Engine {
public:
    // `modelPath`: a GGUF file (told by its magic; config, tokenizer and weights in one file, its
    // quantized tensors kept quantized), or a Hugging Face GPT-2 checkpoint folder whose vocab.json
    // and merges.txt are read when present (otherwise call setTokenizer). options.backend picks what
    // runs it: the GPU (webgl or auto: needs a current GL context) or the CPU.
    Engine(const std::string& modelPath, const ModelOptions& options);
    // A model whose weights the caller sends (ingest(); the web module streams them in), then
    // finishLoad(`label`, what errors name) checks them and the shader programs. `files`: the
    // headers of the files they come from where known (for the matrices that arrive as blocks, and
    // the CPU backend's plan).
    Engine(const ModelConfig& config, const ModelOptions& options,
           const std::vector<const ModelFileHeader*>& files = {});
    void finishLoad(const std::string& label);
    // The GPU bytes such an engine's model and readouts would take on the current context, planned
    // without allocating or compiling anything: what a page shows before choosing a model.
    static std::int64_t plannedGpuBytes(const ModelConfig& config, const ModelOptions& options,
                                        const BlockFormats& blocks = {});
    // The same for the backend options.backend names (auto: the GPU): the GPU's bytes, or the CPU
    // backend's memory at the full context, the weights as `files` store them.
    static std::int64_t plannedBytes(const ModelConfig& config, const ModelOptions& options,
                                     const std::vector<const ModelFileHeader*>& files = {});

    const ModelConfig& config() const { return runner_->config(); }
    // The tensors of `file` the model reads, in file order; one of them from its bytes as stored.
    std::vector<const StoredTensor*> wantedTensors(const ModelFileHeader& file) const;
    void ingest(const ModelFileHeader& file, const StoredTensor& tensor, std::vector<std::uint8_t> bytes) {
        runner_->ingest(file, tensor, std::move(bytes));
    }
    // What runs the model (its backend, the GL capabilities its tuning read), the bytes it has read
    // back, whether its last prefill chunk is done and its programs linked.
    ModelRunner& runner() { return *runner_; }
    const GlCapabilities& capabilities() const { return runner_->capabilities(); }
    std::int64_t readbackBytes() const { return runner_->readbackBytes(); }
    bool chunkDone() { return runner_->chunkDone(); }
    bool programsLinked() { return runner_->programsLinked(); }
    // Bytes of the model's memory: GPU textures, or the CPU backend's weights and cache.
    std::int64_t gpuBytes() const { return runner_->bytes(); }
    const std::vector<int>& tokens() const { return tokens_; }

    void setTokenizer(Tokenizer tokenizer);
    const Tokenizer& tokenizer() const;  // throws when the model folder had no vocab.json/merges.txt
    bool hasTokenizer() const { return tokenizer_.has_value(); }
    // A constrained generation's pattern (generate's regex, or its jsonSchema's JSON text) compiled
    // against the vocabulary: kept for the next generations with the same one (a few at a time), with
    // the masks of the states they reached.
    enum class PatternKind { Regex, JsonSchema };
    std::shared_ptr<CompiledPattern> compiledPattern(PatternKind kind, const std::string& text);

    // Starts a new sequence with `ids` (one set of passes for all of them).
    void prefill(const std::vector<int>& ids);
    // The same a chunk at a time: each prefillStep() issues one chunk of passes and returns true
    // once the whole sequence is in the cache (Gpt2Model::runChunk).
    void beginPrefill(const std::vector<int>& ids);
    bool prefillStep();
    // Appends one token, reusing the KV cache: costs O(sequence length).
    void step(int id);
    // Runs the next position with the token the GPU chose in the last read as its token, before that
    // token is known here (pipelining); commit(id) then appends it once read. Steps run this way and
    // not committed yet are speculative(); step, logits and a new sequence discard them.
    void stepFromChosenToken();
    void commit(int id);
    int speculative() const { return speculative_; }
    // Logits after the last token of the sequence.
    std::vector<float> logits();
    // Attention probabilities of `layer` over the current sequence: heads x T x T.
    std::vector<float> attention(int layer);
    // The perplexity of `ids` in windows of `window` tokens (0: the context; engine/perplexity.h).
    // It runs over the KV cache, so the current sequence ends: the next call starts a new one.
    PerplexityResult perplexity(const std::vector<int>& ids, int window = 0);
    // The logit lens of `ids` (offlineLens): [layer][position] top-k ids and probabilities. `ids`
    // becomes the sequence, as after prefill(ids).
    std::vector<std::vector<LensCell>> lens(const std::vector<int>& ids, int k);
    // The residual stream after block `layer` for `ids`: T x n_embd. The current sequence ends.
    std::vector<float> hiddenStates(const std::vector<int>& ids, int layer);
    // What every forward from now on does inside the blocks (model/interventions.h), each item
    // checked against the model. A list that changes what runs ends the current sequence: its cache
    // holds keys and values made without it.
    void setInterventions(const std::vector<Intervention>& list);

    // Continues `prompt`. `onToken` is called for each new token; returning false cancels
    // (between tokens). When <|endoftext|> ends the text, it is not in the result's ids, but if text
    // was held back it comes in one last call with that id. The GPU draws each token and only its id
    // is read back (all the logits for top-k beyond 64, or where top-p alone needs more than 64
    // candidates).
    GenerateResult generate(const std::vector<int>& prompt, const GenerateOptions& options,
                            const std::function<bool(const GeneratedToken&)>& onToken = {});
    // Greedy continuation of `prompt`: the new ids only.
    std::vector<int> generateGreedy(const std::vector<int>& prompt, int maxNewTokens);

private:
    friend class Generation;
    // Adds `id` to the sequence: a step, or when the context is full (and slideWindow), begins a
    // prefill of the window kept plus `id`, which prefillStep() then runs; returns true in that case.
    bool append(int id, bool slideWindow);
    // Checks a new sequence's ids (`what` names the caller in errors) and ends the current one.
    void startSequence(const std::vector<int>& ids, const char* what);
    void endSequence();

    void makeModel(const ModelConfig& config, const ModelOptions& options,
                   const std::vector<const ModelFileHeader*>& files);
    // Runs `ids` at positions [pos0, pos0 + ids.size()), every chunk.
    void forward(const std::vector<int>& ids, int pos0);

    std::unique_ptr<ModelRunner> runner_;
    std::optional<Tokenizer> tokenizer_;
    std::unique_ptr<TokenTrie> tokenTrie_;  // the vocabulary's bytes, made on first use
    std::map<std::pair<PatternKind, std::string>, std::shared_ptr<CompiledPattern>> patterns_;
    std::vector<int> tokens_;
    std::vector<int> prefilling_;  // the sequence beginPrefill started, until prefillStep finishes it
    InterventionPlan interventions_;
    int speculative_ = 0;
};

}  // namespace gpt2
