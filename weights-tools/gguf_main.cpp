// gpt2-gguf IN_DIR OUT_FILE [--type F32|F16|Q8_0|Q4_0|Q4_K_M]   a Hugging Face GPT-2 folder -> one GGUF file
// (weights-tools/gguf_writer.h). Prints a JSON summary; on failure one line on stderr and exit code 1.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "platform/native/tool_main.h"
#include "util/error.h"
#include "weights-tools/gguf_writer.h"

namespace {

int run(int argc, char** argv) {
    const std::string usage = "usage: gpt2-gguf IN_DIR OUT_FILE [--type F32|F16|Q8_0|Q4_0|Q4_K_M]";
    gpt2::GgufFileType type = gpt2::GgufFileType::F16;
    if (argc == 5 && std::string(argv[3]) == "--type") {
        type = gpt2::parseGgufFileType(argv[4]);
    } else if (argc != 3) {
        gpt2::fail(usage);
    }
    if (std::string(argv[1]).rfind("--", 0) == 0) gpt2::fail(usage);
    const gpt2::GgufWriteSummary s = gpt2::writeGguf(argv[1], argv[2], type);
    std::cout << nlohmann::json{{"n_layer", s.config.layers},
                                {"n_embd", s.config.embedDim},
                                {"vocab_size", s.config.vocabSize},
                                {"tensors", s.tensors},
                                {"bytes", s.bytes}}
                     .dump()
              << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return gpt2::runTool("gpt2-gguf", argc, argv, run); }
