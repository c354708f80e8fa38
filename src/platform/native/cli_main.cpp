// The native `gpt2` tool: JSON on stdout (or streamed text), one clear error line on stderr and exit
// code 1 on failure. `gpt2 help` lists the commands; README.md, "Command line", shows them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <optional>
#include <nlohmann/json.hpp>

#include "engine/benchmark.h"
#include "engine/engine.h"
#include "gl/gl_api.h"
#include "format/gguf.h"
#include "format/packed_model.h"
#include "platform/native/cli_args.h"
#include "platform/native/egl_context.h"
#include "platform/native/tool_main.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

const char* kUsage =
    "usage: gpt2 COMMAND --model PATH [options]   (PATH: a Hugging Face folder, a GGUF file or a packed .gpt2 file)\n"
    "  logits     --ids LIST                       last-position logits as JSON\n"
    "  attention  --ids LIST --layer L             attention probabilities (heads x T x T) as JSON\n"
    "  lens       --ids LIST [--top-k K]           logit lens: per layer, per position, the K (default 5) most likely\n"
    "             next tokens of softmax(lm_head(ln_f(the residual after the layer)))\n"
    "  hidden     --ids LIST --layer L             the residual stream after block L (T x n_embd) as JSON\n"
    "  generate   (--ids LIST | --prompt TEXT) [--max-new-tokens N --temperature T --top-k K --top-p P\n"
    "             --repetition-penalty R --seed S --stop STR --slide on|off --json 1]\n"
    "  tokenize   (--text T | --file F)            {\"ids\": [...]}\n"
    "  detokenize --ids LIST                       {\"text\": \"...\"}\n"
    "  perplexity --text-file F [--window N]       {\"tokens\", \"nll\", \"perplexity\"}: F's tokens in windows of N\n"
    "             (default: the context), every token but a window's first scored\n"
    "  bench      --prompt-tokens P[,P...] --new-tokens N [--profile on]   a JSON line per P: load, prefill,\n"
    "             decode (and with --profile, each pass's ms per decode token)\n"
    "options (src/options.json):\n";
const char* kFileOptions = "  --vocab FILE --merges FILE (default: vocab.json and merges.txt in PATH)";

// Flags of the commands themselves; the options' flags come from options.json (kOptionFlags).
const std::vector<std::string> kCommandFlags = {
    "--model",     "--ids",    "--layer", "--prompt", "--json",    "--text",          "--file",
    "--text-file", "--window", "--vocab", "--merges", "--profile", "--prompt-tokens", "--new-tokens",
};

bool onOff(const CliArgs& args, const std::string& flag, bool fallback) {
    if (!args.has(flag)) return fallback;
    const std::string v = args.text(flag);
    if (v == "on" || v == "1") return true;
    if (v == "off" || v == "0") return false;
    fail(flag, " must be on or off, got \"", v, "\"");
}

double real(const CliArgs& args, const std::string& flag) {
    const std::string text = args.text(flag);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') fail(flag, ": \"", text, "\" is not a number");
    return v;
}

// Sets each field whose flag was given, parsed as options.json types its option. A load or tuning
// value below the schema's minimum fails here (-1 means unset where the option may be unset); the
// generate options' ranges are the engine's to check, in messages that name the option.
class FlagReader {
public:
    FlagReader(const CliArgs& args, bool checkMin) : args_(args), checkMin_(checkMin) {}

    void operator()(const defaults::FlagSpec& spec, TexelFormat& field) {
        if (args_.has(spec.flag)) field = texelFormatOption(spec.name, args_.text(spec.flag));
    }
    void operator()(const defaults::FlagSpec& spec, bool& field) { field = onOff(args_, spec.flag, field); }
    void operator()(const defaults::FlagSpec& spec, int& field) {
        if (!args_.has(spec.flag)) return;
        // Booleans that may be unset are -1, 0 or 1 in ModelOptions.
        field = std::string(spec.type) == "boolean" ? int(onOff(args_, spec.flag, false))
                                                    : checked(spec, args_.integer(spec.flag, 0));
    }
    void operator()(const defaults::FlagSpec& spec, float& field) {
        if (args_.has(spec.flag)) field = float(checked(spec, real(args_, spec.flag)));
    }
    void operator()(const defaults::FlagSpec& spec, double& field) {
        if (args_.has(spec.flag)) field = checked(spec, real(args_, spec.flag));
    }
    void operator()(const defaults::FlagSpec& spec, std::optional<int>& field) {
        if (args_.has(spec.flag)) field = args_.integer(spec.flag, 0);
    }
    void operator()(const defaults::FlagSpec& spec, std::optional<std::uint64_t>& field) {
        if (args_.has(spec.flag)) field = std::uint64_t(std::uint32_t(args_.integer(spec.flag, 0)));
    }
    void operator()(const defaults::FlagSpec& spec, std::vector<std::string>& field) {
        if (args_.has(spec.flag)) field.push_back(args_.text(spec.flag));
    }

private:
    template <typename T>
    T checked(const defaults::FlagSpec& spec, T value) const {
        if (checkMin_ && spec.hasMin && value < spec.min && !(spec.unset && value == -1))
            fail(spec.flag, " must be at least ", spec.min, spec.unset ? " (or -1: unset)" : "", ", got ", value);
        return value;
    }

    const CliArgs& args_;
    bool checkMin_;
};

ModelOptions modelOptions(const CliArgs& args) {
    ModelOptions options;
    defaults::forEachModelFlag(options, FlagReader(args, true));
    return options;
}

Tokenizer loadTokenizer(const CliArgs& args, const std::string& modelDir) {
    if (fileExists(modelDir) && !args.has("--vocab") && isGgufFile(modelDir))
        return ggufTokenizer(GgufFile(modelDir).header());
    if (fileExists(modelDir) && !args.has("--vocab")) {
        const PackedMetadata meta = parsePackedMetadata(SafetensorsFile(modelDir).header());
        if (meta.vocabJson.empty()) fail(modelDir, ": packed without a tokenizer (pass --vocab and --merges)");
        return Tokenizer::fromJsonAndMerges(meta.vocabJson, meta.mergesText);
    }
    const std::string vocab = args.has("--vocab") ? args.text("--vocab") : joinPath(modelDir, "vocab.json");
    const std::string merges = args.has("--merges") ? args.text("--merges") : joinPath(modelDir, "merges.txt");
    if (!fileExists(vocab) || !fileExists(merges))
        fail("no tokenizer: ", vocab, " and ", merges, " are needed (pass --vocab and --merges)");
    return Tokenizer::fromFiles(vocab, merges);
}

GenerateOptions generateOptions(const CliArgs& args) {
    GenerateOptions options;
    defaults::forEachGenerateFlag(options, FlagReader(args, false));
    return options;
}

int run(int argc, char** argv) {
    std::vector<std::string> flags = kCommandFlags;
    flags.insert(flags.end(), std::begin(defaults::kOptionFlags), std::end(defaults::kOptionFlags));
    if (argc >= 2 && (std::string(argv[1]) == "help" || std::string(argv[1]) == "--help")) {
        std::cout << kUsage << defaults::kOptionHelp << kFileOptions << "\n";
        return 0;
    }
    const CliArgs args(argc, argv, flags, "usage: gpt2 COMMAND --model PATH [options]; run gpt2 help for the commands");
    const std::string& command = args.command();
    const std::vector<std::string> commands = {"logits",     "attention",  "generate", "bench", "tokenize",
                                               "detokenize", "perplexity", "lens",     "hidden"};
    if (std::find(commands.begin(), commands.end(), command) == commands.end())
        fail("unknown command \"", command, "\"; run gpt2 help");
    const std::string modelDir = args.text("--model");

    if (command == "tokenize" || command == "detokenize") {
        const Tokenizer tokenizer = loadTokenizer(args, modelDir);
        if (command == "detokenize") {
            StreamDecoder decoder(tokenizer);
            std::string text;
            for (int id : args.ids("--ids")) text += decoder.push(id);
            std::cout << nlohmann::json{{"text", text + decoder.flush()}}.dump() << "\n";
        } else {
            const std::string text = args.has("--file") ? readTextFile(args.text("--file")) : args.text("--text");
            std::cout << nlohmann::json{{"ids", tokenizer.encode(text)}}.dump() << "\n";
        }
        return 0;
    }
    EglContext context;
    const auto loadStart = std::chrono::steady_clock::now();
    Engine engine(modelDir, modelOptions(args));
    glFinish();
    const double loadMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - loadStart).count();
    if (command == "bench") {
        // --prompt-tokens may list several lengths: one JSON line each, from one load.
        const std::vector<int> lengths =
            args.has("--prompt-tokens") ? args.ids("--prompt-tokens") : std::vector<int>{32};
        for (int promptTokens : lengths) {
            auto json = nlohmann::json::parse(benchmarkJson(
                runBenchmark(engine, promptTokens, args.integer("--new-tokens", 16), onOff(args, "--profile", false))));
            json["load_ms"] = loadMs;
            json["weights"] = args.has("--weights") ? args.text("--weights") : defaults::weights;
            std::cout << json.dump() << std::endl;
        }
        return 0;
    }
    if (args.has("--vocab") || args.has("--merges")) engine.setTokenizer(loadTokenizer(args, modelDir));
    if (command == "logits") {
        engine.prefill(args.ids("--ids"));
        std::cout << nlohmann::json{{"logits", engine.logits()}}.dump() << "\n";
        return 0;
    }
    if (command == "perplexity") {
        const PerplexityResult r = engine.perplexity(engine.tokenizer().encode(readTextFile(args.text("--text-file"))),
                                                     args.integer("--window", 0));
        std::cout << nlohmann::json{{"tokens", r.tokens}, {"nll", r.nll}, {"perplexity", r.perplexity}}.dump() << "\n";
        return 0;
    }
    if (command == "lens") {
        nlohmann::json layers = nlohmann::json::array();
        for (const auto& cells : engine.lens(args.ids("--ids"), args.integer("--top-k", 0))) {
            nlohmann::json positions = nlohmann::json::array();
            for (const auto& cell : cells) positions.push_back({{"ids", cell.ids}, {"probs", cell.probs}});
            layers.push_back(std::move(positions));
        }
        std::cout << nlohmann::json{{"lens", layers}}.dump() << "\n";
        return 0;
    }
    if (command == "hidden") {
        std::cout
            << nlohmann::json{{"hidden", engine.hiddenStates(args.ids("--ids"), args.integer("--layer", 0))}}.dump()
            << "\n";
        return 0;
    }
    if (command == "attention") {
        engine.prefill(args.ids("--ids"));
        std::cout << nlohmann::json{{"attention", engine.attention(args.integer("--layer", 0))}}.dump() << "\n";
        return 0;
    }
    // generate: --ids prints the new ids as JSON (greedy by default); --prompt streams text.
    GenerateOptions options = generateOptions(args);
    const bool fromText = args.has("--prompt");
    if (fromText == args.has("--ids")) fail("generate needs exactly one of --prompt and --ids");
    const std::vector<int> prompt = fromText ? engine.tokenizer().encode(args.text("--prompt")) : args.ids("--ids");
    const bool json = !fromText || onOff(args, "--json", false);
    if (!fromText) options.stopAtEndOfText = false;
    const GenerateResult result = engine.generate(prompt, options, [&](const GeneratedToken& token) {
        if (!json) std::cout << token.text << std::flush;
        return true;
    });
    if (json) {
        nlohmann::json out{{"ids", result.ids}};
        if (fromText) out["text"] = result.text;
        std::cout << out.dump() << "\n";
    } else {
        std::cout << "\n";
    }
    return 0;
}

}  // namespace
}  // namespace gpt2

int main(int argc, char** argv) { return gpt2::runTool("gpt2", argc, argv, gpt2::run); }
