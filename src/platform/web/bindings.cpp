// The C ABI of the WebAssembly module, wrapped by web/gpt2.js. Every function returns 0 (or a
// handle > 0) on success and -1 on failure, with the message in gpt2_last_error(). Structured
// results travel as JSON text (gpt2_result) or as a float array (gpt2_float_ptr / gpt2_float_count).
#include <emscripten/emscripten.h>
#include <emscripten/heap.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/benchmark.h"
#include "engine/engine.h"
#include "format/packed_model.h"
#include "model/weight_file.h"
#include "gl/gl_objects.h"
#include "platform/web/webgl_context.h"
#include "util/error.h"

namespace gpt2 {
namespace {

// Members are destroyed bottom-up: every GL object goes before the context that owns it.
struct WebModel {
    std::unique_ptr<WebGlContext> context;
    std::unique_ptr<Gpt2Model> loading;
    std::unique_ptr<Engine> engine;
    std::unique_ptr<WeightFile> file;  // the file being streamed in
    std::string packedVocab, packedMerges;
    std::unique_ptr<Generation> generation;
};

std::map<int, std::unique_ptr<WebModel>> g_models;
int g_nextHandle = 1;
std::string g_error, g_result;
std::vector<float> g_floats;

WebModel& model(int handle) {
    auto it = g_models.find(handle);
    if (it == g_models.end()) fail("no model with handle ", handle, " (disposed?)");
    WebModel& m = *it->second;
    if (m.context->lost())
        fail("WebGL context lost (the browser reclaimed the GPU); call restore() or load the model again");
    m.context->makeCurrent();
    return m;
}

Engine& engine(int handle) {
    WebModel& m = model(handle);
    if (!m.engine) fail("the model is still loading");
    return *m.engine;
}

template <typename F>
int guarded(F&& f) {
    try {
        f();
        return 0;
    } catch (const std::exception& e) {
        g_error = e.what();
        return -1;
    }
}

// A context lost in the middle of a call makes GL calls do nothing and reads return zeros: the
// result of that call cannot be trusted, so it fails too.
void checkStillThere(int handle) {
    auto it = g_models.find(handle);
    if (it != g_models.end() && it->second->context->lost())
        fail("WebGL context lost (the browser reclaimed the GPU); call restore() or load the model again");
}

GenerateOptions parseGenerateOptions(const std::string& text) {
    const auto json = nlohmann::json::parse(text);
    GenerateOptions o;
    auto number = [&](const char* key, auto fallback) {
        if (!json.contains(key) || json[key].is_null()) return fallback;
        if (!json[key].is_number()) fail(key, " must be a number, got ", json[key].dump());
        return json[key].get<decltype(fallback)>();
    };
    o.maxNewTokens = number("maxNewTokens", 50);
    o.sampling.temperature = number("temperature", 0.0f);
    if (json.contains("topK") && !json["topK"].is_null()) o.sampling.topK = number("topK", 0);
    o.sampling.topP = number("topP", 1.0f);
    o.sampling.repetitionPenalty = number("repetitionPenalty", 1.0f);
    if (json.contains("seed") && !json["seed"].is_null()) o.sampling.seed = number("seed", std::uint64_t(0));
    if (json.contains("stop")) o.stop = json["stop"].get<std::vector<std::string>>();
    if (json.contains("stopAtEndOfText")) o.stopAtEndOfText = json["stopAtEndOfText"].get<bool>();
    if (json.contains("slideWindow")) o.slideWindow = json["slideWindow"].get<bool>();
    return o;
}

std::vector<int> parseIds(const char* json) {
    const auto parsed = nlohmann::json::parse(json);
    if (!parsed.is_array()) fail("token ids must be an array of integers");
    std::vector<int> ids;
    for (const auto& v : parsed) {
        if (!v.is_number_integer()) fail("token ids must be integers, got ", v.dump());
        ids.push_back(v.get<int>());
    }
    return ids;
}

// {"weights": "fp16"|"fp32", "maxTextureSize": N, "halfPairs": bool, "splitTexels": N}; the last two
// are optional (the engine's choice for the GPU otherwise). gpt2.js has checked the types.
ModelOptions parseModelOptions(const char* text) {
    const auto json = nlohmann::json::parse(text);
    ModelOptions o;
    o.weights = json.at("weights").get<std::string>() == "fp16" ? TexelFormat::Float16 : TexelFormat::Float32;
    o.maxTextureSize = json.at("maxTextureSize").get<int>();
    if (json.contains("halfPairs")) o.halfPairs = json["halfPairs"].get<bool>() ? 1 : 0;
    if (json.contains("splitTexels")) o.splitTexels = json["splitTexels"].get<int>();
    return o;
}

int createModel(const char* canvasSelector, const ModelConfig& config, const char* optionsJson) {
    const ModelOptions options = parseModelOptions(optionsJson);
    auto m = std::make_unique<WebModel>();
    m->context = std::make_unique<WebGlContext>(canvasSelector);
    m->loading = std::make_unique<Gpt2Model>(config, options);
    const int handle = g_nextHandle++;
    g_models[handle] = std::move(m);
    return handle;
}

// Starts streaming one file; the result lists the tensors to send as [{"name", "begin", "end"}]
// with absolute byte offsets, in file order.
void beginFile(WebModel& m, SafetensorsHeader header) {
    if (!m.loading) fail("the model has finished loading");
    m.file = std::make_unique<WeightFile>(std::move(header), m.loading->weights());
    nlohmann::json list = nlohmann::json::array();
    const std::uint64_t base = m.file->header().dataOffset;
    for (const TensorInfo* info : m.file->wanted())
        list.push_back({{"name", info->name}, {"begin", base + info->begin}, {"end", base + info->end}});
    g_result = list.dump();
}
}  // namespace
}  // namespace gpt2

using namespace gpt2;

extern "C" {

EMSCRIPTEN_KEEPALIVE const char* gpt2_last_error() { return g_error.c_str(); }
EMSCRIPTEN_KEEPALIVE const char* gpt2_result() { return g_result.c_str(); }
EMSCRIPTEN_KEEPALIVE const float* gpt2_float_ptr() { return g_floats.data(); }
EMSCRIPTEN_KEEPALIVE int gpt2_float_count() { return int(g_floats.size()); }
EMSCRIPTEN_KEEPALIVE int gpt2_live_gl_objects() { return liveGlObjects(); }

// Makes a WebGL2 context on the canvas and allocates every texture and pass for `configJson`
// (a Hugging Face folder; its safetensors files follow through gpt2_begin_file).
EMSCRIPTEN_KEEPALIVE int gpt2_create(const char* canvasSelector, const char* configJson, const char* optionsJson) {
    int handle = -1;
    guarded([&] { handle = createModel(canvasSelector, parseModelConfig(configJson, "config.json"), optionsJson); });
    return handle;
}

// A packed model file: its header carries the config and tokenizer. Returns the handle; the result
// lists the tensors to send, as gpt2_begin_file does.
EMSCRIPTEN_KEEPALIVE int gpt2_open_packed(const char* canvasSelector, const std::uint8_t* header, int headerSize, double fileSize,
                                          const char* optionsJson, const char* label) {
    int handle = -1;
    guarded([&] {
        SafetensorsHeader parsed = parseSafetensorsHeader(header, std::size_t(headerSize), std::uint64_t(fileSize), label);
        const PackedMetadata meta = parsePackedMetadata(parsed);
        handle = createModel(canvasSelector, meta.config, optionsJson);
        WebModel& m = *g_models[handle];
        m.packedVocab = meta.vocabJson;
        m.packedMerges = meta.mergesText;
        beginFile(m, std::move(parsed));
    });
    return handle;
}

EMSCRIPTEN_KEEPALIVE int gpt2_begin_file(int handle, const std::uint8_t* header, int headerSize, double fileSize, const char* label) {
    return guarded([&] { beginFile(model(handle), parseSafetensorsHeader(header, std::size_t(headerSize), std::uint64_t(fileSize), label)); });
}

EMSCRIPTEN_KEEPALIVE int gpt2_upload_tensor(int handle, const char* name, const std::uint8_t* bytes, int size) {
    return guarded([&] {
        WebModel& m = model(handle);
        if (!m.file) fail("no file is being loaded");
        const TensorInfo& info = m.file->header().tensor(name);
        if (std::uint64_t(size) != info.end - info.begin) fail(m.file->header().label, ": tensor ", name, " got ", size, " bytes");
        m.file->upload(info, bytes);
    });
}

// The file's tensors have all been sent: checks a packed file's payload checksum.
EMSCRIPTEN_KEEPALIVE int gpt2_end_file(int handle) {
    return guarded([&] {
        WebModel& m = model(handle);
        if (!m.file) fail("no file is being loaded");
        m.file->finish();
        m.file.reset();
    });
}

// Checks that every weight arrived and attaches the tokenizer (empty strings: none).
EMSCRIPTEN_KEEPALIVE int gpt2_finish_load(int handle, const char* vocabJson, const char* mergesText, const char* label) {
    return guarded([&] {
        WebModel& m = model(handle);
        if (!m.loading) fail("the model has finished loading");
        m.loading->weights().checkComplete(label);
        auto engine = std::make_unique<Engine>(std::move(m.loading));
        if (*vocabJson)
            engine->setTokenizer(Tokenizer::fromJsonAndMerges(vocabJson, mergesText));
        else if (!m.packedVocab.empty())
            engine->setTokenizer(Tokenizer::fromJsonAndMerges(m.packedVocab, m.packedMerges));
        m.engine = std::move(engine);
        m.packedVocab.clear();
        m.packedMerges.clear();
        const ModelConfig& c = m.engine->config();
        g_result = modelConfigToJson(c);
    });
}

EMSCRIPTEN_KEEPALIVE int gpt2_tokenize(int handle, const char* text, int allowSpecial) {
    return guarded([&] { g_result = nlohmann::json(engine(handle).tokenizer().encode(text, allowSpecial != 0)).dump(); });
}

EMSCRIPTEN_KEEPALIVE int gpt2_decode(int handle, const char* idsJson) {
    return guarded([&] {
        const Tokenizer& tokenizer = engine(handle).tokenizer();
        StreamDecoder decoder(tokenizer);
        std::string text;
        for (int id : parseIds(idsJson)) text += decoder.push(id);
        g_result = text + decoder.flush();
    });
}

EMSCRIPTEN_KEEPALIVE int gpt2_generate_begin(int handle, const char* idsJson, const char* optionsJson) {
    return guarded([&] {
        WebModel& m = model(handle);
        engine(handle);
        m.generation.reset();
        m.generation = std::make_unique<Generation>(*m.engine, parseIds(idsJson), parseGenerateOptions(optionsJson));
    });
}

// One token: {"id", "text"}, or {"done": true, "reason"} at the end.
EMSCRIPTEN_KEEPALIVE int gpt2_generate_next(int handle) {
    return guarded([&] {
        WebModel& m = model(handle);
        if (!m.generation) fail("no generation in progress");
        try {
            if (auto token = m.generation->next()) {
                checkStillThere(handle);
                g_result = nlohmann::json{{"id", token->id}, {"text", token->text}}.dump();
                return;
            }
        } catch (...) {
            m.generation.reset();
            throw;
        }
        g_result = nlohmann::json{{"done", true}, {"reason", stopReasonName(m.generation->reason())}}.dump();
        m.generation.reset();
    });
}

EMSCRIPTEN_KEEPALIVE int gpt2_generate_cancel(int handle) {
    return guarded([&] { model(handle).generation.reset(); });
}

// Runs `ids` as a new sequence; the floats are the last position's logits.
EMSCRIPTEN_KEEPALIVE int gpt2_logits(int handle, const char* idsJson) {
    return guarded([&] {
        Engine& e = engine(handle);
        e.prefill(parseIds(idsJson));
        g_floats = e.logits();
        checkStillThere(handle);
    });
}

// Attention of `layer` over the current sequence: floats heads x T x T, result {"heads", "tokens"}.
EMSCRIPTEN_KEEPALIVE int gpt2_attention(int handle, int layer) {
    return guarded([&] {
        Engine& e = engine(handle);
        g_floats = e.attention(layer);
        checkStillThere(handle);
        g_result = nlohmann::json{{"heads", e.config().heads}, {"tokens", e.tokens().size()}}.dump();
    });
}

EMSCRIPTEN_KEEPALIVE int gpt2_stats(int handle) {
    return guarded([&] {
        Gpt2Model& m = engine(handle).model();
        g_result = nlohmann::json{{"gpuBytes", m.gpuBytes()},
                                  {"readbackBytes", m.readbackBytes()},
                                  {"passDraws", passDraws()},
                                  {"renderer", m.capabilities().renderer},
                                  {"maxTextureSize", m.capabilities().limits.maxTextureSize},
                                  {"wasmHeapBytes", emscripten_get_heap_size()}}
                       .dump();
    });
}

// The benchmark of `gpt2 bench`, run in the browser: the result is its JSON line.
EMSCRIPTEN_KEEPALIVE int gpt2_bench(int handle, int promptTokens, int newTokens, int profile) {
    return guarded([&] { g_result = benchmarkJson(runBenchmark(engine(handle), promptTokens, newTokens, profile != 0)); });
}

EMSCRIPTEN_KEEPALIVE int gpt2_destroy(int handle) {
    return guarded([&] {
        auto it = g_models.find(handle);
        if (it == g_models.end()) return;
        // GL names are per context: the deletes must go to this model's context even when it is
        // lost (where they do nothing), never to another model's context that happens to be current.
        emscripten_webgl_make_context_current(it->second->context->handle());
        g_models.erase(it);
    });
}

}  // extern "C"
