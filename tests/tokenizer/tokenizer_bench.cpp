// Encoding throughput over the Brown corpus, starting from an empty word cache as a fresh engine does.
// Prints one JSON line: {"bytes":..., "seconds":..., "mb_per_s":...} (MB = 10^6 bytes).
#include <chrono>
#include <cstdio>
#include <exception>

#include "test_support.h"

int main() {
    try {
        const std::string text = gpt2::test::brownCorpusText();
        const gpt2::Tokenizer& tokenizer = gpt2::test::gpt2Tokenizer();
        const auto start = std::chrono::steady_clock::now();
        const std::vector<int> ids = tokenizer.encode(text);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("{\"bytes\":%zu, \"seconds\":%.4f, \"mb_per_s\":%.2f}\n", text.size(), seconds,
                    text.size() / seconds / 1e6);
        return ids.empty() ? 1 : 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tokenizer_bench: %s\n", e.what());
        return 1;
    }
}
