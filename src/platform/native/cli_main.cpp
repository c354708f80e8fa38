// The native `gpt2` tool: JSON on stdout (or streamed text), one clear error line on stderr and exit
// code 1 on failure. Its commands are one table (commands()): name, usage, the flags each takes and
// its handler; `gpt2 help` is written from it. README.md, "Command line", and docs/api.md show them.
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
#include "platform/native/cli_args.h"
#include "platform/native/cli_interventions.h"
#include "platform/native/egl_context.h"
#include "platform/native/tool_main.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

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
    void operator()(const defaults::FlagSpec& spec, Backend& field) {
        if (args_.has(spec.flag)) field = backendOption(args_.text(spec.flag));
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
    void operator()(const defaults::FlagSpec& spec, std::optional<std::string>& field) {
        if (args_.has(spec.flag)) field = args_.text(spec.flag);
    }
    // --logit-bias ID:BIAS,ID:BIAS (BIAS a number, or -inf).
    void operator()(const defaults::FlagSpec& spec, std::vector<std::pair<int, float>>& field) {
        if (!args_.has(spec.flag)) return;
        const std::string list = args_.text(spec.flag);
        for (std::size_t start = 0; start <= list.size();) {
            const std::size_t comma = std::min(list.find(',', start), list.size());
            const std::string item = list.substr(start, comma - start);
            const std::size_t colon = item.find(':');
            char* end = nullptr;
            const long id = colon == std::string::npos ? -1 : std::strtol(item.c_str(), &end, 10);
            const bool idOk = colon != std::string::npos && end == item.c_str() + colon && id >= 0;
            const float bias = idOk ? std::strtof(item.c_str() + colon + 1, &end) : 0.0f;
            if (!idOk || item.size() == colon + 1 || *end != '\0')
                fail(spec.flag, " takes ID:BIAS,ID:BIAS (BIAS a number or -inf), got \"", item, "\"");
            field.push_back({int(id), bias});
            start = comma + 1;
        }
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
    if (fileExists(modelDir) && !args.has("--vocab")) return fileTokenizer(ModelFileReader(modelDir).header());
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

// What a command's handler gets: the flags, and the engine where the command loads the model.
struct Invocation {
    const CliArgs& args;
    std::string modelDir;
    Engine* engine = nullptr;
    double loadMs = 0;
};

void runTokenize(const Invocation& in) {
    const std::string text = in.args.has("--file") ? readTextFile(in.args.text("--file")) : in.args.text("--text");
    std::cout << nlohmann::json{{"ids", loadTokenizer(in.args, in.modelDir).encode(text)}}.dump() << "\n";
}

void runDetokenize(const Invocation& in) {
    const Tokenizer tokenizer = loadTokenizer(in.args, in.modelDir);
    StreamDecoder decoder(tokenizer);
    std::string text;
    for (int id : in.args.ids("--ids")) text += decoder.push(id);
    std::cout << nlohmann::json{{"text", text + decoder.flush()}}.dump() << "\n";
}

void runLogits(const Invocation& in) {
    in.engine->prefill(in.args.ids("--ids"));
    std::cout << nlohmann::json{{"logits", in.engine->logits()}}.dump() << "\n";
}

void runAttention(const Invocation& in) {
    in.engine->prefill(in.args.ids("--ids"));
    std::cout << nlohmann::json{{"attention", in.engine->attention(in.args.integer("--layer", 0))}}.dump() << "\n";
}

void runLens(const Invocation& in) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& cells : in.engine->lens(in.args.ids("--ids"), in.args.integer("--lens-top", 0))) {
        nlohmann::json positions = nlohmann::json::array();
        for (const auto& cell : cells) positions.push_back({{"ids", cell.ids}, {"probs", cell.probs}});
        layers.push_back(std::move(positions));
    }
    std::cout << nlohmann::json{{"lens", layers}}.dump() << "\n";
}

void runHidden(const Invocation& in) {
    const auto hidden = in.engine->hiddenStates(in.args.ids("--ids"), in.args.integer("--layer", 0));
    std::cout << nlohmann::json{{"hidden", hidden}}.dump() << "\n";
}

void runPerplexity(const Invocation& in) {
    const std::vector<int> ids = in.engine->tokenizer().encode(readTextFile(in.args.text("--text-file")));
    const PerplexityResult r = in.engine->perplexity(ids, in.args.integer("--window", 0));
    std::cout << nlohmann::json{{"tokens", r.tokens}, {"nll", r.nll}, {"perplexity", r.perplexity}}.dump() << "\n";
}

// --ids prints the new ids as JSON (greedy by default); --prompt streams text.
void runGenerate(const Invocation& in) {
    const CliArgs& args = in.args;
    GenerateOptions options = generateOptions(args);
    const bool fromText = args.has("--prompt");
    if (fromText == args.has("--ids")) fail("generate needs exactly one of --prompt and --ids");
    const std::vector<int> prompt = fromText ? in.engine->tokenizer().encode(args.text("--prompt")) : args.ids("--ids");
    const bool json = !fromText || onOff(args, "--json", false);
    if (!fromText) options.stopAtEndOfText = false;
    const GenerateResult result = in.engine->generate(prompt, options, [&](const GeneratedToken& token) {
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
}

// --prompt-tokens may list several lengths: one JSON line each, from one load. The sampling flags
// are generate's (greedy by default).
void runBench(const Invocation& in) {
    const CliArgs& args = in.args;
    const std::vector<int> lengths = args.has("--prompt-tokens") ? args.ids("--prompt-tokens") : std::vector<int>{32};
    const SamplingOptions sampling = generateOptions(args).sampling;
    for (int promptTokens : lengths) {
        auto json = nlohmann::json::parse(benchmarkJson(runBenchmark(
            *in.engine, promptTokens, args.integer("--new-tokens", 16), onOff(args, "--profile", false), sampling)));
        json["load_ms"] = in.loadMs;
        json["weights"] = args.has("--weights") ? args.text("--weights") : defaults::weights;
        std::cout << json.dump() << std::endl;
    }
}

// Which of options.json's flags a command takes, besides its own.
enum class OptionGroups { None, Model, ModelAndGenerate };

// One row per command: `gpt2 help` is written from these, and a command takes exactly --model, its
// `flags` and its option groups.
struct Command {
    const char* name;
    const char* usage;               // its flags, as `gpt2 help` shows them
    const char* summary;             // what it prints
    std::vector<std::string> flags;  // what it takes besides --model and its options
    OptionGroups options;            // None: the model is not loaded (the tokenizer only)
    void (*run)(const Invocation&);
};

const std::vector<Command>& commands() {
    static const std::vector<Command> table = {
        {"logits", "--ids LIST", "last-position logits as JSON", {"--ids"}, OptionGroups::Model, runLogits},
        {"attention",
         "--ids LIST --layer L",
         "attention probabilities (heads x T x T) as JSON",
         {"--ids", "--layer"},
         OptionGroups::Model,
         runAttention},
        {"lens",
         "--ids LIST [--lens-top K]",
         "logit lens: per layer, per position, the K (default 5) most likely next tokens of\n"
         "softmax(lm_head(ln_f(the residual after the layer)))",
         {"--ids", "--lens-top"},
         OptionGroups::Model,
         runLens},
        {"hidden",
         "--ids LIST --layer L",
         "the residual stream after block L (T x n_embd) as JSON",
         {"--ids", "--layer"},
         OptionGroups::Model,
         runHidden},
        {"generate",
         "(--ids LIST | --prompt TEXT) [--json 1] [--vocab FILE --merges FILE] [generate options]",
         "--ids: the new ids as JSON (greedy unless sampling options); --prompt: streamed text, or with\n"
         "--json 1 {\"ids\", \"text\"}",
         {"--ids", "--prompt", "--json", "--vocab", "--merges"},
         OptionGroups::ModelAndGenerate,
         runGenerate},
        {"tokenize",
         "(--text T | --file F) [--vocab FILE --merges FILE]",
         "{\"ids\": [...]}",
         {"--text", "--file", "--vocab", "--merges"},
         OptionGroups::None,
         runTokenize},
        {"detokenize",
         "--ids LIST [--vocab FILE --merges FILE]",
         "{\"text\": \"...\"}",
         {"--ids", "--vocab", "--merges"},
         OptionGroups::None,
         runDetokenize},
        {"perplexity",
         "--text-file F [--window N] [--vocab FILE --merges FILE]",
         "{\"tokens\", \"nll\", \"perplexity\"}: F's tokens in windows of N (default: the context), every\n"
         "token but a window's first scored",
         {"--text-file", "--window", "--vocab", "--merges"},
         OptionGroups::Model,
         runPerplexity},
        {"bench",
         "--prompt-tokens P[,P...] --new-tokens N [--profile on] [--temperature T --top-k K --top-p P\n"
         "             --repetition-penalty R --seed S]",
         "a JSON line per P: load, prefill, decode (and with --profile, each pass's ms per decode token and "
         "each matmul kind's weights per second); the steps draw as generate does with those flags (greedy "
         "without them)",
         {"--prompt-tokens", "--new-tokens", "--profile", "--temperature", "--top-k", "--top-p", "--repetition-penalty",
          "--seed"},
         OptionGroups::Model,
         runBench},
    };
    return table;
}

// The flags of one group of options.json, from the generated visitors.
template <typename Options, typename ForEach>
std::vector<std::string> optionFlags(ForEach forEach) {
    Options options;
    std::vector<std::string> flags;
    forEach(options, [&](const defaults::FlagSpec& spec, auto&) { flags.push_back(spec.flag); });
    return flags;
}

const std::vector<std::string>& modelFlags() {
    static const std::vector<std::string> flags =
        optionFlags<ModelOptions>([](auto& o, auto&& visit) { defaults::forEachModelFlag(o, visit); });
    return flags;
}

const std::vector<std::string>& generateFlags() {
    static const std::vector<std::string> flags =
        optionFlags<GenerateOptions>([](auto& o, auto&& visit) { defaults::forEachGenerateFlag(o, visit); });
    return flags;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

bool takes(const Command& command, const std::string& flag) {
    return flag == "--model" || contains(command.flags, flag) ||
           (command.options != OptionGroups::None &&
            (contains(modelFlags(), flag) || contains(interventionFlags(), flag))) ||
           (command.options == OptionGroups::ModelAndGenerate && contains(generateFlags(), flag));
}

// "--model --ids --layer, and options.json's load and tuning flags".
std::string flagsOf(const Command& command) {
    std::string out = "--model";
    for (const std::string& flag : command.flags) out += " " + flag;
    if (command.options == OptionGroups::Model) out += ", and the load and tuning options and interventions";
    if (command.options == OptionGroups::ModelAndGenerate)
        out += ", and the load, tuning and generate options and interventions";
    return out;
}

// The commands that take a group of options, for the help's headings.
std::string commandsTaking(bool (*pick)(const Command&)) {
    std::string out;
    for (const Command& command : commands())
        if (pick(command)) out += std::string(out.empty() ? "" : ", ") + command.name;
    return out;
}

void printHelp() {
    std::cout << "usage: gpt2 COMMAND --model PATH [flags]   (PATH: a Hugging Face folder or a GGUF file)\n";
    const std::string indent(13, ' ');
    for (const Command& command : commands()) {
        std::string name = command.name;
        std::cout << "  " << name << std::string(indent.size() - 2 - name.size(), ' ') << command.usage << "\n";
        std::string summary = command.summary;
        for (std::size_t start = 0; start < summary.size();) {
            const std::size_t end = std::min(summary.find('\n', start), summary.size());
            std::cout << indent << summary.substr(start, end - start) << "\n";
            start = end + 1;
        }
    }
    std::cout << "tokenizer: --vocab FILE --merges FILE (default: vocab.json and merges.txt in PATH, or the "
                 "file's own)\n";
    // kOptionHelp is a line per option flag, in options.json's order: each goes under its group.
    std::string model, generate;
    const std::string help = defaults::kOptionHelp;
    for (std::size_t start = 0; start < help.size();) {
        const std::size_t end = help.find('\n', start) + 1;
        const std::string line = help.substr(start, end - start);
        const std::size_t flag = line.find("--");
        (contains(generateFlags(), line.substr(flag, line.find(' ', flag) - flag)) ? generate : model) += line;
        start = end;
    }
    std::cout << "load and tuning options (src/options.json), for "
              << commandsTaking([](const Command& c) { return c.options != OptionGroups::None; }) << ":\n"
              << model << "generate options (src/options.json), for "
              << commandsTaking([](const Command& c) { return c.options == OptionGroups::ModelAndGenerate; }) << ":\n"
              << generate << "interventions, for "
              << commandsTaking([](const Command& c) { return c.options != OptionGroups::None; }) << ":\n"
              << kInterventionHelp;
}

int run(int argc, char** argv) {
    if (argc >= 2 && (std::string(argv[1]) == "help" || std::string(argv[1]) == "--help")) {
        printHelp();
        return 0;
    }
    const CliArgs args(argc, argv, "usage: gpt2 COMMAND --model PATH [flags]; run gpt2 help for the commands");
    const auto found =
        std::find_if(commands().begin(), commands().end(), [&](const Command& c) { return args.command() == c.name; });
    if (found == commands().end()) fail("unknown command \"", args.command(), "\"; run gpt2 help");
    const Command& command = *found;
    for (const std::string& flag : args.flags()) {
        if (takes(command, flag)) continue;
        const bool known =
            std::any_of(commands().begin(), commands().end(), [&](const Command& other) { return takes(other, flag); });
        fail(known ? "" : "unknown flag ", flag, known ? " is not a flag of " : " for ", command.name, ", which takes ",
             flagsOf(command), " (gpt2 help lists them)");
    }
    Invocation invocation{args, args.text("--model")};
    if (command.options == OptionGroups::None) {
        command.run(invocation);
        return 0;
    }
    ModelOptions options = modelOptions(args);
    std::optional<EglContext> context;
    if (options.backend != Backend::Cpu) {
        try {
            context.emplace();
        } catch (const Error& e) {
            if (options.backend == Backend::WebGl) throw;
            std::cerr << "gpt2: running on the CPU: no GL context (" << e.what() << ")\n";
            options.backend = Backend::Cpu;
        }
    }
    const auto loadStart = std::chrono::steady_clock::now();
    Engine engine(invocation.modelDir, options);
    if (context) glFinish();
    invocation.loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - loadStart).count();
    if (args.has("--vocab") || args.has("--merges")) engine.setTokenizer(loadTokenizer(args, invocation.modelDir));
    engine.setInterventions(interventionsFromFlags(args));
    invocation.engine = &engine;
    command.run(invocation);
    return 0;
}

}  // namespace
}  // namespace gpt2

int main(int argc, char** argv) { return gpt2::runTool("gpt2", argc, argv, gpt2::run); }
