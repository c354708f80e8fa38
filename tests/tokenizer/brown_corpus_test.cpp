// The whole Brown corpus (about 6 MB, 1.3 million tokens) against gpt-3-encoder's JS encode(), run
// by node over the same text (encode_with_gpt3_encoder.cjs), so no network is needed.
//
// gpt-3-encoder deviates from Hugging Face in two ways, neither of which this ASCII text touches, so
// zero mismatches are expected (and were found):
// - it does not treat "<|endoftext|>" as special: hf_cases_test.cpp covers that;
// - its regex runs on JavaScript's \s, which includes U+FEFF and leaves out U+0085, where Python's
//   `regex` module and Hugging Face's tokenizers use Unicode White_Space. WhereGpt3EncoderDiffers
//   below pins Hugging Face's ids for both.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "test_support.h"
#include "util/file.h"

namespace gpt2 {
namespace {

class TempDir {
public:
    TempDir() : path_(std::filesystem::temp_directory_path() / ("tokenizer_test_" + std::to_string(::getpid()))) {
        std::filesystem::create_directories(path_);
    }
    ~TempDir() { std::filesystem::remove_all(path_); }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

std::vector<int> encodeWithGpt3Encoder(const std::string& text) {
    const TempDir dir;
    std::ofstream(dir.file("text.txt"), std::ios::binary) << text;
    const std::string command = "node '" + test::sourcePath("tests/tokenizer/encode_with_gpt3_encoder.cjs") + "' '" +
                                dir.file("text.txt") + "' '" + dir.file("ids.json") + "'";
    const int status = std::system(command.c_str());
    if (status != 0) {
        ADD_FAILURE() << "`" << command << "` failed (status " << status
                      << "); it needs node on PATH and npm ci run in the source tree";
        return {};
    }
    return nlohmann::json::parse(readTextFile(dir.file("ids.json"))).get<std::vector<int>>();
}

TEST(BrownCorpus, IdsMatchGpt3Encoder) {
    const std::string text = test::brownCorpusText();
    const std::vector<int> expected = encodeWithGpt3Encoder(text);
    ASSERT_FALSE(expected.empty());
    const std::vector<int> actual = test::gpt2Tokenizer().encode(text);

    const auto [a, e] = std::mismatch(actual.begin(), actual.end(), expected.begin(), expected.end());
    if (a != actual.end() || e != expected.end()) {
        const std::size_t at = a - actual.begin();
        const std::vector<int> before(actual.begin() + (at > 20 ? at - 20 : 0), a);
        FAIL() << "first mismatch at token " << at << " of " << actual.size() << " (gpt-3-encoder: " << expected.size()
               << "), after the text \"" << test::gpt2Tokenizer().decode(before) << "\": got "
               << (a != actual.end() ? std::to_string(*a) : "the end") << ", gpt-3-encoder has "
               << (e != expected.end() ? std::to_string(*e) : "the end");
    }
    EXPECT_EQ(test::gpt2Tokenizer().decode(actual), text);
}

// Ids from Hugging Face transformers 5.17.0 (GPT2TokenizerFast over these same files). gpt-3-encoder
// gives [87, 220, 171, 119, 123, 88] for the first, taking U+FEFF for a space, and [87, 1587, 227, 88]
// for the second, where " \u0085" is a run of punctuation to it.
TEST(BrownCorpus, WhereGpt3EncoderDiffersWeFollowHuggingFace) {
    EXPECT_EQ(test::gpt2Tokenizer().encode("x \uFEFFy"), (std::vector<int>{87, 27332, 119, 123, 88}));
    EXPECT_EQ(test::gpt2Tokenizer().encode("x \u0085y"), (std::vector<int>{87, 220, 126, 227, 88}));
}

}  // namespace
}  // namespace gpt2
