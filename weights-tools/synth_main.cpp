// gpt2-synth OUT_DIR (--size 124M|355M|774M|1.5B | --n-embd N --n-layer N --n-head N [--n-positions N --vocab-size N])
//            [--seed S] [--dtype fp32|fp16]
// Writes a random-weight Hugging Face GPT-2 checkpoint (config.json + model.safetensors).
#include <filesystem>
#include <iostream>
#include <string>

#include "platform/native/cli_args.h"
#include "platform/native/tool_main.h"
#include "util/error.h"
#include "weights-tools/synthetic_checkpoint.h"

namespace {

int run(int argc, char** argv) {
    // CliArgs treats argv[1] as the command: here it is the output folder.
    const gpt2::CliArgs args(
        argc, argv,
        {"--size", "--seed", "--dtype", "--n-embd", "--n-layer", "--n-head", "--n-positions", "--vocab-size"},
        "usage: gpt2-synth OUT_DIR (--size 124M|355M|774M|1.5B | --n-embd N --n-layer N --n-head N) [--seed S] "
        "[--dtype fp32|fp16]");
    const std::string dir = args.command();
    gpt2::ModelConfig config;
    if (args.has("--size")) {
        config = gpt2::officialConfig(args.text("--size"));
    } else {
        config.embedDim = args.integer("--n-embd", 0);
        config.layers = args.integer("--n-layer", 0);
        config.heads = args.integer("--n-head", 0);
        if (config.embedDim <= 0 || config.layers <= 0 || config.heads <= 0)
            gpt2::fail("give --size, or --n-embd, --n-layer and --n-head (positive)");
        if (config.embedDim % config.heads) gpt2::fail("--n-embd must be a multiple of --n-head");
        config.innerDim = 4 * config.embedDim;
    }
    config.contextLength = args.integer("--n-positions", config.contextLength);
    config.vocabSize = args.integer("--vocab-size", config.vocabSize);
    gpt2::SyntheticWeights weights;
    weights.seed = unsigned(args.integer("--seed", 0));
    const std::string dtype = args.has("--dtype") ? args.text("--dtype") : "fp32";
    if (dtype != "fp32" && dtype != "fp16") gpt2::fail("--dtype must be fp32 or fp16");
    weights.dtype = dtype == "fp16" ? gpt2::DType::F16 : gpt2::DType::F32;
    std::filesystem::create_directories(dir);
    gpt2::writeSyntheticCheckpoint(dir, config, weights);
    std::cout << "{\"dir\":\"" << dir << "\",\"n_layer\":" << config.layers << ",\"n_embd\":" << config.embedDim
              << "}\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return gpt2::runTool("gpt2-synth", argc, argv, run); }
