// fuzz_regression TARGET PATH...: runs every file under each PATH (a corpus folder or one file)
// through fuzz target TARGET, the same entry point libFuzzer drives. Fails on an unexpected exception
// (anything but gpt2::Error, which the targets catch) or a failed invariant (abort); a sanitizer
// build also fails on what ASan/UBSan report.
#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_common.h"

GPT2_FUZZ_ENTRY(safetensors)(const std::uint8_t* data, std::size_t size);
GPT2_FUZZ_ENTRY(config)(const std::uint8_t* data, std::size_t size);
GPT2_FUZZ_ENTRY(tokenizer)(const std::uint8_t* data, std::size_t size);
GPT2_FUZZ_ENTRY(vocab)(const std::uint8_t* data, std::size_t size);
GPT2_FUZZ_ENTRY(gguf)(const std::uint8_t* data, std::size_t size);

namespace {

using Entry = int (*)(const std::uint8_t*, std::size_t);

struct Target {
    const char* name;
    Entry entry;
};

const Target kTargets[] = {
    {"safetensors", gpt2_fuzz_safetensors},
    {"config", gpt2_fuzz_config},
    {"tokenizer", gpt2_fuzz_tokenizer},
    {"vocab", gpt2_fuzz_vocab},
    {"gguf", gpt2_fuzz_gguf},
};

}  // namespace

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    const Target* target = nullptr;
    if (argc >= 2)
        for (const Target& t : kTargets)
            if (std::strcmp(argv[1], t.name) == 0) target = &t;
    if (!target || argc < 3) {
        std::cerr << "usage: fuzz_regression TARGET CORPUS_DIR_OR_FILE...\n  targets:";
        for (const Target& t : kTargets) std::cerr << ' ' << t.name;
        std::cerr << '\n';
        return 2;
    }

    std::vector<fs::path> files;
    for (int i = 2; i < argc; ++i) {
        const fs::path path = argv[i];
        std::error_code error;
        if (fs::is_directory(path, error)) {
            for (const auto& entry : fs::recursive_directory_iterator(path))
                if (entry.is_regular_file()) files.push_back(entry.path());
        } else if (fs::is_regular_file(path, error)) {
            files.push_back(path);
        } else {
            std::cerr << path.string() << ": no such file or folder\n";
            return 2;
        }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::cerr << "no corpus files for target " << target->name << '\n';
        return 2;
    }

    int failures = 0;
    for (const fs::path& file : files) {
        std::ifstream in(file, std::ios::binary);
        const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in.good() && !in.eof()) {
            std::cerr << file.string() << ": cannot read\n";
            return 2;
        }
        // Named before the run, so a crash's log says which input it was.
        std::cout << target->name << ": " << file.string() << " (" << bytes.size() << " bytes)" << std::endl;
        try {
            target->entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        } catch (const std::exception& e) {
            std::cerr << file.string() << ": unexpected exception: " << e.what() << '\n';
            ++failures;
        } catch (...) {
            std::cerr << file.string() << ": unexpected non-std exception\n";
            ++failures;
        }
    }
    std::cout << target->name << ": " << files.size() << " inputs, " << failures << " failed" << std::endl;
    return failures ? 1 : 0;
}
