// The native `gpt2` tool: JSON on stdout, one clear error line on stderr and exit code 1 on failure.
//   gpt2 logits    --model DIR --ids 15496,11,616 [--weights fp32|fp16] [--max-texture-size N]
//   gpt2 attention --model DIR --ids LIST --layer L [same options]
//   gpt2 generate  --model DIR --ids LIST --max-new-tokens N [same options]
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "platform/native/cli_args.h"
#include "platform/native/egl_context.h"
#include "util/error.h"

namespace gpt2 {
namespace {

ModelOptions modelOptions(const CliArgs& args) {
    ModelOptions options;
    const std::string weights = args.has("--weights") ? args.text("--weights") : "fp32";
    if (weights == "fp16")
        options.weights = TexelFormat::Float16;
    else if (weights != "fp32")
        fail("--weights must be fp32 or fp16, got \"", weights, "\"");
    options.maxTextureSize = args.integer("--max-texture-size", 0);
    if (args.has("--max-texture-size") && options.maxTextureSize <= 0) fail("--max-texture-size must be positive");
    return options;
}

nlohmann::json run(int argc, char** argv) {
    const std::vector<std::string> flags = {"--model", "--ids", "--weights", "--max-texture-size", "--layer", "--max-new-tokens"};
    const CliArgs args(argc, argv, flags);
    const std::string& command = args.command();
    if (command != "logits" && command != "attention" && command != "generate")
        fail("unknown command \"", command, "\"; commands: logits, attention, generate");

    EglContext context;
    Engine engine(args.text("--model"), modelOptions(args));
    const std::vector<int> ids = args.ids("--ids");
    if (command == "logits") {
        engine.prefill(ids);
        return {{"logits", engine.logits()}};
    }
    if (command == "attention") {
        engine.prefill(ids);
        return {{"attention", engine.attention(args.integer("--layer", 0))}};
    }
    return {{"ids", engine.generateGreedy(ids, args.integer("--max-new-tokens", 20))}};
}

}  // namespace
}  // namespace gpt2

int main(int argc, char** argv) {
    try {
        std::cout << gpt2::run(argc, argv).dump() << "\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "gpt2: " << e.what() << "\n";
        return 1;
    }
}
