// The native `gpt2` tool: JSON on stdout (or streamed text), one clear error line on stderr and exit
// code 1 on failure. `gpt2 help` lists the commands; README.md, "Command line", shows them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/benchmark.h"
#include "engine/engine.h"
#include "gl/gl_api.h"
#include "format/packed_model.h"
#include "platform/native/cli_args.h"
#include "platform/native/egl_context.h"
#include "platform/native/tool_main.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

const char* kUsage =
    "usage: gpt2 COMMAND --model PATH [options]   (PATH: a Hugging Face folder or a packed .gpt2 file)\n"
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
const char* kMoreOptions =
    "  --line-width N (texels per line of activations: -1 auto, 0 unfolded rows, else a power of two)\n"
    "  --attention-block-keys N (decode attention over blocks of N keys past N: -1 auto, 0 never, else a multiple of "
    "4)\n"
    "  --prompt-split-texels N (split-K of the matmuls over prompt chunks: -1 auto; 0 exactly where --split-texels is "
    "0)\n"
    "  --prefill-chunk N (prompt tokens per chunk: -1 auto, on GPUs 256 for models up to 124M's size and 128 above,\n"
    "    32 on software renderers)\n"
    "  --pass-per-output N (Q, K and V: -1 auto, a pass each on software renderers; 0 one pass; 1 a pass each)\n"
    "  --row-moments-in-vertex N (one-row matmuls sum their LayerNorm's moments: -1 auto, GPUs for rows of at most\n"
    "    64 texels; 0 never, a pass of their own; 1 always)\n"
    "  --half-prompt-inputs N (prompt matmuls read their LayerNorm's or activation's rows, and prompt attention "
    "scores\n"
    "    their queries, as fp16 row pairs: -1 auto, GPUs with fp16 or int8 weights; 0 fp32 rows; 1 always)\n"
    "  --vocab FILE --merges FILE (default: in DIR)";

bool onOff(const CliArgs& args, const std::string& flag, bool fallback) {
    if (!args.has(flag)) return fallback;
    const std::string v = args.text(flag);
    if (v == "on" || v == "1") return true;
    if (v == "off" || v == "0") return false;
    fail(flag, " must be on or off, got \"", v, "\"");
}

float real(const CliArgs& args, const std::string& flag, float fallback) {
    if (!args.has(flag)) return fallback;
    const std::string text = args.text(flag);
    char* end = nullptr;
    const float v = std::strtof(text.c_str(), &end);
    if (text.empty() || *end != '\0') fail(flag, ": \"", text, "\" is not a number");
    return v;
}

ModelOptions modelOptions(const CliArgs& args) {
    ModelOptions options;
    if (args.has("--weights")) options.weights = weightFormatNamed(args.text("--weights"));
    options.maxTextureSize = args.integer("--max-texture-size", defaults::maxTextureSize);
    options.maxColorBits = args.integer("--max-color-bits", 0);
    options.maxGpuBytes = real(args, "--max-gpu-bytes", float(options.maxGpuBytes));
    options.splitTexels = args.integer("--split-texels", -1);
    if (args.has("--half-pairs")) options.halfPairs = onOff(args, "--half-pairs", true);
    options.activationLineWidth = args.integer("--line-width", -1);
    options.attentionBlockKeys = args.integer("--attention-block-keys", -1);
    options.rowsPerFragment = args.integer("--rows-per-fragment", -1);
    options.promptSplitTexels = args.integer("--prompt-split-texels", -1);
    options.prefillChunk = args.integer("--prefill-chunk", -1);
    options.passPerOutput = args.integer("--pass-per-output", -1);
    options.rowMomentsInVertex = args.integer("--row-moments-in-vertex", -1);
    options.halfPromptInputs = args.integer("--half-prompt-inputs", -1);
    if (options.splitTexels < -1) fail("--split-texels must be -1 (auto), 0 (off) or positive");
    if (options.activationLineWidth < -1) fail("--line-width must be -1 (auto), 0 (unfolded rows) or a power of two");
    if (args.has("--max-texture-size") && options.maxTextureSize <= 0) fail("--max-texture-size must be positive");
    if (args.has("--max-color-bits") && options.maxColorBits <= 0) fail("--max-color-bits must be positive");
    if (options.maxGpuBytes < 0) fail("--max-gpu-bytes must be 0 (no cap) or positive");
    return options;
}

Tokenizer loadTokenizer(const CliArgs& args, const std::string& modelDir) {
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
    GenerateOptions o;
    o.maxNewTokens = args.integer("--max-new-tokens", o.maxNewTokens);
    o.sampling.temperature = real(args, "--temperature", o.sampling.temperature);
    if (args.has("--top-k")) o.sampling.topK = args.integer("--top-k", 0);
    o.sampling.topP = real(args, "--top-p", o.sampling.topP);
    o.sampling.repetitionPenalty = real(args, "--repetition-penalty", o.sampling.repetitionPenalty);
    if (args.has("--seed")) o.sampling.seed = std::uint64_t(std::uint32_t(args.integer("--seed", 0)));
    if (args.has("--stop")) o.stop.push_back(args.text("--stop"));
    o.slideWindow = onOff(args, "--slide", o.slideWindow);
    return o;
}

int run(int argc, char** argv) {
    const std::vector<std::string> flags = {"--model",
                                            "--ids",
                                            "--weights",
                                            "--max-texture-size",
                                            "--layer",
                                            "--max-new-tokens",
                                            "--prompt",
                                            "--temperature",
                                            "--top-k",
                                            "--top-p",
                                            "--repetition-penalty",
                                            "--seed",
                                            "--stop",
                                            "--slide",
                                            "--json",
                                            "--text",
                                            "--file",
                                            "--text-file",
                                            "--window",
                                            "--vocab",
                                            "--merges",
                                            "--prompt-tokens",
                                            "--new-tokens",
                                            "--profile",
                                            "--split-texels",
                                            "--half-pairs",
                                            "--line-width",
                                            "--attention-block-keys",
                                            "--rows-per-fragment",
                                            "--prompt-split-texels",
                                            "--prefill-chunk",
                                            "--pass-per-output",
                                            "--row-moments-in-vertex",
                                            "--half-prompt-inputs",
                                            "--max-color-bits",
                                            "--max-gpu-bytes"};
    if (argc >= 2 && (std::string(argv[1]) == "help" || std::string(argv[1]) == "--help")) {
        std::cout << kUsage << defaults::kOptionHelp << kMoreOptions << "\n";
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
