// gpt2-pack IN_DIR OUT_FILE [--dtype fp16|fp32|int8]   a Hugging Face GPT-2 folder -> one packed model file
// gpt2-pack --verify FILE                              checks a packed file
// Prints a JSON summary; on failure one line on stderr and exit code 1.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "platform/native/tool_main.h"
#include "util/error.h"
#include "weights-tools/packer.h"

namespace {

nlohmann::json describe(const gpt2::PackSummary& s) {
    return {{"n_layer", s.config.layers},       {"n_embd", s.config.embedDim}, {"n_head", s.config.heads},
            {"vocab_size", s.config.vocabSize}, {"tensors", s.tensors},        {"payload_bytes", s.payloadBytes},
            {"payload_crc32", s.payloadCrc32},  {"tokenizer", s.hasTokenizer}};
}

int run(int argc, char** argv) {
    const std::string usage = "usage: gpt2-pack IN_DIR OUT_FILE [--dtype fp16|fp32|int8] | gpt2-pack --verify FILE";
    if (argc == 3 && std::string(argv[1]) == "--verify") {
        nlohmann::json out = describe(gpt2::verifyPacked(argv[2]));
        out["ok"] = true;
        std::cout << out.dump() << "\n";
        return 0;
    }
    gpt2::PackedWeights weights = gpt2::PackedWeights::Fp16;
    if (argc == 5 && std::string(argv[3]) == "--dtype") {
        weights = gpt2::parsePackedWeights(argv[4]);
    } else if (argc != 3) {
        gpt2::fail(usage);
    }
    if (std::string(argv[1]).rfind("--", 0) == 0) gpt2::fail(usage);
    std::cout << describe(gpt2::packCheckpoint(argv[1], argv[2], weights)).dump() << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return gpt2::runTool("gpt2-pack", argc, argv, run); }
