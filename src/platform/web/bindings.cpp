// The seam between the WebAssembly module and web/module/gpt2-engine.js, through embind: typed values
// (numbers, strings, typed arrays, option objects checked against src/options.json by the JS side)
// both ways. A C++ failure reaches JS as a thrown Error with the engine's message; a lost context, as
// the module's ContextLostError, and a canvas without WebGL2 as its WebGL2UnavailableError (the classes
// of web/module/gpt2-errors.js, which gpt2-native.js hands the module).
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/heap.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "engine/benchmark.h"
#include "engine/engine.h"
#include "gl/gl_objects.h"
#include "platform/web/js_interventions.h"
#include "platform/web/js_options.h"
#include "platform/web/webgl_context.h"
#include "util/error.h"

using emscripten::val;

namespace gpt2 {
namespace {

// One poll of a generation: kind "pending" (call again after yielding), "token" or "done"; a token
// of a generation with live views carries what it captured (an array, else undefined).
struct WebStep {
    std::string kind;
    int id = -1;
    std::string text;
    val captured = val::undefined();
};

// The WebGL context was lost: what a call that finds it so throws, and JS sees as its ContextLostError.
struct ContextLost {};

template <typename F>
auto guarded(F&& f) -> decltype(f()) {
    std::string message;
    bool lost = false;
    std::optional<int> noWebgl2;
    try {
        return f();
    } catch (const ContextLost&) {
        lost = true;
    } catch (const WebGl2Unavailable& e) {
        noWebgl2 = e.code;
    } catch (const std::exception& e) {
        message = e.what();
    }
    // Thrown outside the catch block, so the C++ exception is freed before JS unwinds.
    if (lost) val::module_property("ContextLostError").new_().throw_();
    if (noWebgl2) {
        val detail = val::object();
        detail.set("code", *noWebgl2);
        val::module_property("WebGL2UnavailableError").new_(detail).throw_();
    }
    val::global("Error").new_(val(message)).throw_();
}

std::vector<int> idsFrom(const val& ids) { return emscripten::convertJSArrayToNumberVector<int>(ids); }

template <typename T>
val typedArray(const std::vector<T>& values) {
    return val(emscripten::typed_memory_view(values.size(), values.data())).call<val>("slice");
}

// Lens cells back to back, as JS sees them: `ids` (Int32Array) and `probs` (Float32Array).
struct LensArrays {
    std::vector<int> ids;
    std::vector<float> probs;
    void add(const LensCell& cell) {
        ids.insert(ids.end(), cell.ids.begin(), cell.ids.end());
        probs.insert(probs.end(), cell.probs.begin(), cell.probs.end());
    }
    void setOn(val& object) const {
        object.set("ids", typedArray(ids));
        object.set("probs", typedArray(probs));
    }
};

// [{position, lens: {ids, probs} ([layer][rank]) or undefined, attention ([head][key]) or undefined}]
val capturedToJs(const std::vector<CapturedPosition>& captured) {
    val out = val::array();
    for (const auto& c : captured) {
        val position = val::object();
        position.set("position", c.position);
        if (!c.lens.empty()) {
            LensArrays arrays;
            for (const auto& cell : c.lens) arrays.add(cell);
            val lens = val::object();
            arrays.setOn(lens);
            position.set("lens", lens);
        }
        if (!c.attention.empty()) position.set("attention", typedArray(c.attention));
        out.call<void>("push", position);
    }
    return out;
}

val parseJson(const std::string& text) { return val::global("JSON").call<val>("parse", text); }

// The WebGL2 context a model with `options` renders with, on the canvas `canvasTarget` names in
// Module.specialHTMLTargets (an HTMLCanvasElement or an OffscreenCanvas: the page's or a worker's);
// none for the CPU backend, which needs no canvas.
std::unique_ptr<WebGlContext> contextFor(const std::string& canvasTarget, const ModelOptions& options) {
    if (options.backend == Backend::Cpu) return nullptr;
    return std::make_unique<WebGlContext>(canvasTarget);
}

// Members are destroyed bottom-up: every GL object goes before the context that owns it.
class WebModel {
public:
    // `file`: the header of a whole-model file (openModelFile), whose tensors then stream in as a
    // checkpoint file's do and whose tokenizer comes with it; null for a folder's config.json.
    WebModel(const std::string& canvasTarget, const ModelConfig& config, const ModelOptions& options,
             std::unique_ptr<ModelFileHeader> file = nullptr)
        : context_(contextFor(canvasTarget, options)) {
        std::vector<const ModelFileHeader*> files;
        if (file) files.push_back(file.get());
        engine_ = std::make_unique<Engine>(config, options, files);
        if (file) fileTokenizer_.emplace(fileTokenizer(*file));
        file_ = std::move(file);
    }

    ~WebModel() {
        // GL names are per context: the deletes must go to this model's context even when it is
        // lost (where they do nothing), never to another model's context that happens to be current.
        if (context_) emscripten_webgl_make_context_current(context_->handle());
        endRuns();
        file_.reset();
        engine_.reset();
    }

    // Starts streaming one file of a checkpoint folder from its first `headerSize` bytes (at heap
    // `header`); false while those end inside its header (the caller reads more and calls again).
    bool beginFile(std::uintptr_t header, int headerSize, double fileSize, const std::string& label) {
        current();
        loadingEngine();
        auto parsed = parseModelFileHeader(reinterpret_cast<const std::uint8_t*>(header), std::size_t(headerSize),
                                           std::uint64_t(fileSize), label);
        if (parsed) file_ = std::make_unique<ModelFileHeader>(std::move(*parsed));
        return bool(parsed);
    }

    // The tensors of the file being streamed to send, [{name, begin, end}] with absolute offsets, in
    // file order.
    val tensors() {
        const ModelFileHeader& file = loadingFile();
        val list = val::array();
        for (const StoredTensor* t : loadingEngine().wantedTensors(file)) {
            val entry = val::object();
            entry.set("name", t->storedName);
            entry.set("begin", double(t->begin));
            entry.set("end", double(t->end));
            list.call<void>("push", entry);
        }
        return list;
    }

    // Room in the wasm heap for the next tensor's `size` bytes, which the module writes there: the
    // CPU backend keeps that buffer as the weight, so a tensor is never held twice.
    std::uintptr_t tensorBuffer(double size) {
        current();
        incoming_ = std::vector<std::uint8_t>(static_cast<std::size_t>(size));
        return reinterpret_cast<std::uintptr_t>(incoming_.data());
    }

    // The tensor whose bytes tensorBuffer's room now holds.
    void uploadTensor(const std::string& name) {
        current();
        const ModelFileHeader& file = loadingFile();
        const auto t = std::find_if(file.tensors.begin(), file.tensors.end(),
                                    [&](const StoredTensor& t) { return t.storedName == name; });
        if (t == file.tensors.end() || incoming_.size() != t->end - t->begin)
            fail(file.label, ": tensor ", name, " got ", incoming_.size(), " bytes");
        loadingEngine().ingest(file, *t, std::exchange(incoming_, {}));
    }

    // The file's tensors have all been sent.
    void endFile() {
        current();
        loadingFile();
        file_.reset();
    }

    // Checks that every weight arrived and attaches the tokenizer (empty strings: the GGUF file's,
    // or none). Returns the config as Hugging Face names it.
    val finishLoad(const std::string& vocabJson, const std::string& mergesText, const std::string& label) {
        current();
        loadingEngine();
        engine_->finishLoad(label);
        loaded_ = true;
        if (!vocabJson.empty())
            engine_->setTokenizer(Tokenizer::fromJsonAndMerges(vocabJson, mergesText));
        else if (fileTokenizer_)
            engine_->setTokenizer(std::move(*fileTokenizer_));
        fileTokenizer_.reset();
        return parseJson(modelConfigToJson(engine_->config()));
    }

    bool programsLinked() {
        current();
        return engine_->programsLinked();
    }

    // Bytes of the model's textures, known once it is made, before any weight arrives.
    double gpuBytes() { return double(engine_->gpuBytes()); }

    val tokenize(const std::string& text, bool allowSpecial) {
        return typedArray(engine().tokenizer().encode(text, allowSpecial));
    }

    std::string decode(const val& ids) {
        StreamDecoder decoder(engine().tokenizer());
        std::string text;
        for (int id : idsFrom(ids)) text += decoder.push(id);
        return text + decoder.flush();
    }

    void beginGeneration(const val& ids, const val& o) {
        Engine& e = engine();
        const GenerateOptions options = generateOptionsFromJs(o);
        endRuns();
        generation_ = std::make_unique<Generation>(e, idsFrom(ids), options);
    }

    WebStep pollGeneration() {
        engine();
        if (!generation_) fail("no generation in progress");
        WebStep step;
        try {
            if (auto token = generation_->poll()) {
                checkStillThere();
                step.kind = "token";
                step.id = token->id;
                step.text = token->text;
                if (!token->captured.empty()) step.captured = capturedToJs(token->captured);
                return step;
            }
        } catch (...) {
            generation_.reset();
            throw;
        }
        if (!generation_->done()) {
            step.kind = "pending";
            return step;
        }
        step.kind = "done";
        generation_.reset();
        return step;
    }

    void cancelGeneration() { generation_.reset(); }

    // Runs `ids` as a new sequence; pollLogits() until true, then takeLogits(): the last position's.
    void beginLogits(const val& ids) {
        Engine& e = engine();
        endRuns();
        logits_ = std::make_unique<LogitsRun>(e, idsFrom(ids));
    }

    bool pollLogits() {
        engine();
        if (!logits_) fail("no logits run in progress");
        return logits_->poll();
    }

    val takeLogits() {
        engine();
        if (!logits_) fail("no logits run in progress");
        const std::vector<float> logits = logits_->take();
        logits_.reset();
        checkStillThere();
        return typedArray(logits);
    }

    // What every run from now on does inside the blocks: an `interventions` option (js_interventions.h).
    void setInterventions(const val& list) {
        Engine& e = engine();
        endRuns();
        e.setInterventions(interventionsFromJs(list));
    }

    // Attention of `layer` over the current sequence, run with `interventions`:
    // {heads, tokens, data: heads x T x T}. Where they change what runs, the engine ends the
    // sequence, which runs again under them.
    val attention(int layer, const val& interventions) {
        Engine& e = engine();
        const std::vector<int> ids = e.tokens();
        if (ids.empty()) fail("attention: no sequence yet; run generate, logits or lens first");
        setInterventions(interventions);
        if (e.tokens().empty()) e.prefill(ids);
        const std::vector<float> data = e.attention(layer);
        checkStillThere();
        val out = val::object();
        out.set("heads", e.config().heads);
        out.set("tokens", int(e.tokens().size()));
        out.set("data", typedArray(data));
        return out;
    }

    // The logit lens of `input` (text or token ids), which becomes the sequence:
    // {layers, tokens, topK, ids, probs}, ids and probs [layer][position][rank] (offlineLens).
    val lens(val input, int k) {
        Engine& e = engine();
        const auto cells = e.lens(idsOf(input), k);
        checkStillThere();
        LensArrays arrays;
        for (const auto& layer : cells)
            for (const auto& cell : layer) arrays.add(cell);
        val out = val::object();
        out.set("layers", int(cells.size()));
        out.set("tokens", int(cells.front().size()));
        out.set("topK", int(cells.front().front().ids.size()));
        arrays.setOn(out);
        return out;
    }

    // The residual stream after block `layer` for `input` (text or token ids): T x n_embd floats.
    val hiddenStates(val input, int layer) {
        Engine& e = engine();
        const std::vector<float> states = e.hiddenStates(idsOf(input), layer);
        checkStillThere();
        return typedArray(states);
    }

    // Perplexity of `input` (text or token ids) in windows of `window` tokens (0: the context), as
    // {tokens, nll, perplexity} (engine/perplexity.h). Reads back as it goes, blocking this thread.
    val perplexity(val input, int window) {
        Engine& e = engine();
        const std::vector<int> ids = idsOf(input);
        const PerplexityResult r = e.perplexity(ids, window);
        checkStillThere();
        val out = val::object();
        out.set("tokens", double(r.tokens));
        out.set("nll", r.nll);
        out.set("perplexity", r.perplexity);
        return out;
    }

    val stats() {
        val out = val::object();
        out.set("gpuBytes", double(engine().gpuBytes()));
        out.set("readbackBytes", double(engine().readbackBytes()));
        out.set("passDraws", double(passDraws()));
        out.set("backend", std::string(engine().runner().backend()));
        out.set("renderer", engine().capabilities().renderer);
        out.set("maxTextureSize", engine().capabilities().limits.maxTextureSize);
        out.set("colorBits", engine().capabilities().colorBits);
        out.set("renderTargets", engine().capabilities().renderTargets);
        out.set("wasmHeapBytes", double(emscripten_get_heap_size()));
        return out;
    }

    // The benchmark of `gpt2 bench`, polled as a generation is: benchReady() advances it without
    // waiting and says when it has finished; takeBench() then gives its JSON line as an object.
    // `generate`: generate's options (every one), of which the sampling ones apply.
    void startBench(int promptTokens, int newTokens, bool profile, const val& generate) {
        Engine& e = engine();
        endRuns();
        benchmark_ =
            std::make_unique<Benchmark>(e, promptTokens, newTokens, profile, generateOptionsFromJs(generate).sampling);
    }
    bool benchReady() {
        if (!benchmark_) fail("no benchmark was started");
        try {
            return benchmark_->poll();
        } catch (...) {
            benchmark_.reset();
            throw;
        }
    }
    val takeBench() {
        if (!benchmark_ || !benchmark_->poll()) fail("the benchmark has not finished");
        const std::string json = benchmarkJson(benchmark_->result());
        benchmark_.reset();
        return parseJson(json);
    }

    bool contextLost() const { return context_ && context_->lost(); }
    bool softwareRenderer() { return engine().capabilities().softwareRenderer; }

private:
    const ModelFileHeader& loadingFile() const {
        if (!file_) fail("no file is being loaded");
        return *file_;
    }

    void current() {
        checkStillThere();
        if (context_) context_->makeCurrent();
    }

    // Ends the polled runs (a generation, a logits run, a benchmark): one runs at a time.
    void endRuns() {
        logits_.reset();
        generation_.reset();
        benchmark_.reset();
    }

    Engine& engine() {
        current();
        if (!loaded_) fail("the model is still loading");
        return *engine_;
    }

    Engine& loadingEngine() {
        if (loaded_) fail("the model has finished loading");
        return *engine_;
    }

    // A call's input: text (encoded with the model's tokenizer) or token ids.
    std::vector<int> idsOf(const val& input) {
        return input.isString() ? engine().tokenizer().encode(input.as<std::string>()) : idsFrom(input);
    }

    // A context lost before or in the middle of a call makes GL calls do nothing and reads return
    // zeros: the call cannot be trusted, so it fails.
    void checkStillThere() const {
        if (contextLost()) throw ContextLost{};
    }

    std::unique_ptr<WebGlContext> context_;  // none on the CPU backend
    std::unique_ptr<Engine> engine_;         // loading until finishLoad
    bool loaded_ = false;
    std::unique_ptr<ModelFileHeader> file_;   // the file being streamed in
    std::vector<std::uint8_t> incoming_;      // the bytes of its next tensor (tensorBuffer)
    std::unique_ptr<Benchmark> benchmark_;    // the last startBench's, until takeBench
    std::optional<Tokenizer> fileTokenizer_;  // a whole-model file's, until finishLoad
    std::unique_ptr<Generation> generation_;
    std::unique_ptr<LogitsRun> logits_;
};

// A model for a Hugging Face folder: `configJson` is its config.json; the safetensors files follow
// through beginFile.
WebModel* createModel(const std::string& canvasTarget, const std::string& configJson, const val& options) {
    return guarded([&] {
        return new WebModel(canvasTarget, parseModelConfig(configJson, "config.json"), modelOptionsFromJs(options));
    });
}

// The bytes a model of `configJson` (config.json) would take with `options`: on the GPU planned on a
// context made for it on the canvas, which is destroyed again (nothing is allocated or compiled); on
// the CPU backend its memory.
double plannedGpuBytes(const std::string& canvasTarget, const std::string& configJson, const val& options) {
    return guarded([&] {
        const ModelOptions o = modelOptionsFromJs(options);
        const auto context = contextFor(canvasTarget, o);
        return double(Engine::plannedBytes(parseModelConfig(configJson, "config"), o));
    });
}

// The GPU bytes the whole-model file whose first `headerSize` bytes lie at heap `header` would take
// with `options`, planned from its config and tensor types as plannedGpuBytes plans a config; -1
// while those bytes end inside the header (the caller reads more and calls again).
double plannedFileGpuBytes(const std::string& canvasTarget, std::uintptr_t header, int headerSize, double fileSize,
                           const val& options, const std::string& label) {
    return guarded([&]() -> double {
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(header);
        if (!isWholeModelFile(bytes, std::size_t(headerSize)))
            fail(label,
                 ": is not a GGUF file; GPT2.gpuBytes plans a config object, a folder (from its config.json) or "
                 "a GGUF file");
        const auto file = parseModelFileHeader(bytes, std::size_t(headerSize), std::uint64_t(fileSize), label);
        if (!file) return -1;
        const ModelOptions o = modelOptionsFromJs(options);
        const auto context = contextFor(canvasTarget, o);
        return double(Engine::plannedBytes(*file->config, o, {&*file}));
    });
}

// A model for a file given on its own, from its first `headerSize` bytes (at heap `header`); null
// while those end inside the header (the caller reads more and calls again). The file must be a
// whole model (a GGUF file: config, tokenizer and tensors); its tensors then stream in through
// tensors and uploadTensor.
WebModel* openModelFile(const std::string& canvasTarget, std::uintptr_t header, int headerSize, double fileSize,
                        const val& options, const std::string& label) {
    return guarded([&]() -> WebModel* {
        auto file = parseModelFileHeader(reinterpret_cast<const std::uint8_t*>(header), std::size_t(headerSize),
                                         std::uint64_t(fileSize), label);
        if (!file) return nullptr;
        requireWholeModel(*file);
        const ModelConfig config = *file->config;
        return new WebModel(canvasTarget, config, modelOptionsFromJs(options),
                            std::make_unique<ModelFileHeader>(std::move(*file)));
    });
}

// The load and generate options as the engine takes them, written back ({ load, generate }): how a
// test sees that every option of options.json crosses the seam.
val optionsSeen(const val& load, const val& generate) {
    return guarded([&] {
        val seen = val::object();
        seen.set("load", modelOptionsToJs(modelOptionsFromJs(load)));
        seen.set("generate", generateOptionsToJs(generateOptionsFromJs(generate)));
        return seen;
    });
}

// Each method of WebModel as JS sees it: C++ errors become JS Errors.
template <auto Method, typename... Args>
auto safe(WebModel& m, Args... args) {
    return guarded([&] { return (m.*Method)(std::move(args)...); });
}

}  // namespace
}  // namespace gpt2

EMSCRIPTEN_BINDINGS(gpt2) {
    using namespace gpt2;
    using namespace emscripten;
    value_object<WebStep>("Step")
        .field("kind", &WebStep::kind)
        .field("id", &WebStep::id)
        .field("text", &WebStep::text)
        .field("captured", &WebStep::captured);
    class_<WebModel>("Model")
        .function("beginFile", &safe<&WebModel::beginFile, std::uintptr_t, int, double, std::string>)
        .function("tensors", &safe<&WebModel::tensors>)
        .function("tensorBuffer", &safe<&WebModel::tensorBuffer, double>)
        .function("uploadTensor", &safe<&WebModel::uploadTensor, std::string>)
        .function("endFile", &safe<&WebModel::endFile>)
        .function("programsLinked", &safe<&WebModel::programsLinked>)
        .function("gpuBytes", &safe<&WebModel::gpuBytes>)
        .function("finishLoad", &safe<&WebModel::finishLoad, std::string, std::string, std::string>)
        .function("tokenize", &safe<&WebModel::tokenize, std::string, bool>)
        .function("decode", &safe<&WebModel::decode, val>)
        .function("beginGeneration", &safe<&WebModel::beginGeneration, val, val>)
        .function("pollGeneration", &safe<&WebModel::pollGeneration>)
        .function("cancelGeneration", &safe<&WebModel::cancelGeneration>)
        .function("beginLogits", &safe<&WebModel::beginLogits, val>)
        .function("pollLogits", &safe<&WebModel::pollLogits>)
        .function("takeLogits", &safe<&WebModel::takeLogits>)
        .function("setInterventions", &safe<&WebModel::setInterventions, val>)
        .function("attention", &safe<&WebModel::attention, int, val>)
        .function("perplexity", &safe<&WebModel::perplexity, val, int>)
        .function("lens", &safe<&WebModel::lens, val, int>)
        .function("hiddenStates", &safe<&WebModel::hiddenStates, val, int>)
        .function("stats", &safe<&WebModel::stats>)
        .function("startBench", &safe<&WebModel::startBench, int, int, bool, val>)
        .function("benchReady", &safe<&WebModel::benchReady>)
        .function("takeBench", &safe<&WebModel::takeBench>)
        .function("contextLost", &WebModel::contextLost)
        .function("softwareRenderer", &safe<&WebModel::softwareRenderer>);
    function("createModel", &createModel, allow_raw_pointers());
    function("openModelFile", &openModelFile, allow_raw_pointers());
    function("liveGlObjects", &liveGlObjects);
    function("plannedGpuBytes", &plannedGpuBytes);
    function("plannedFileGpuBytes", &plannedFileGpuBytes, allow_raw_pointers());
    function("optionsSeen", &optionsSeen);
}
