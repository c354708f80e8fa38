// What the driver made of the engine's programs: every program that a prompt and a few decode steps
// of MODEL use, as glGetProgramBinary returns it, for program_stats.py to count what each does.
//
//   build/native/program_binaries MODEL OUT_DIR [--weights fp16|fp32|int8|int4]
//
// OUT_DIR gets a file per program (NNN.bin) and index.jsonl, a line per program: its file, the
// driver's binary format, its label, and what it was made from (vertex shader, fragment shader and
// defines). NVIDIA's binaries carry the assembly its compiler made as text; other drivers' may be
// opaque, or empty where GL_NUM_PROGRAM_BINARY_FORMATS is 0.
#include <GLES3/gl3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/gpu_runner.h"
#include "platform/native/egl_context.h"
#include "platform/native/tool_main.h"
#include "util/error.h"

namespace {

using gpt2::fail;

int run(int argc, char** argv) {
    if (argc != 3 && !(argc == 5 && std::string(argv[3]) == "--weights"))
        fail("usage: program_binaries MODEL OUT_DIR [--weights fp16|fp32|int8|int4]");
    const std::filesystem::path out = argv[2];
    gpt2::EglContext context;
    gpt2::ModelOptions options;
    if (argc == 5) options.weights = gpt2::texelFormatOption("weights", argv[4]);
    options.backend = gpt2::Backend::WebGl;
    gpt2::Engine engine(argv[1], options);
    auto* gpu = dynamic_cast<gpt2::GpuRunner*>(&engine.runner());
    if (!gpu) fail(argv[1], " runs on the CPU backend; program_binaries needs a GPU context");

    // A prompt of 32 tokens and a few decode steps: the programs of both.
    std::vector<int> prompt;
    for (int i = 0; i < 32; ++i) prompt.push_back((i * 997 + 13) % engine.config().vocabSize);
    engine.generateGreedy(prompt, 4);

    std::filesystem::create_directories(out);
    std::ofstream index(out / "index.jsonl");
    int n = 0;
    for (const auto& [key, program] : gpu->programs().all()) {
        GLint length = 0;
        glGetProgramiv(program->id(), GL_PROGRAM_BINARY_LENGTH, &length);
        std::vector<char> binary(std::size_t(length > 0 ? length : 0));
        GLenum format = 0;
        if (length > 0) glGetProgramBinary(program->id(), length, nullptr, &format, binary.data());
        char file[16];
        std::snprintf(file, sizeof file, "%03d.bin", n++);
        std::ofstream(out / file, std::ios::binary).write(binary.data(), std::streamsize(binary.size()));
        index << nlohmann::json{{"file", file}, {"format", format}, {"label", program->label()}, {"key", key}}.dump()
              << "\n";
    }
    std::printf("%d programs of %s into %s (%s)\n", n, argv[1], out.c_str(),
                reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return gpt2::runTool("program_binaries", argc, argv, run); }
