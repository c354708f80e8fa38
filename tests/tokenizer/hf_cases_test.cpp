// The C++ tokenizer against ids made by Hugging Face's GPT-2 tokenizer (tests/fixtures/tokenizer/README.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_support.h"
#include "util/file.h"

namespace gpt2 {
namespace {

struct Case {
    std::string text;
    std::vector<int> ids;
};

std::vector<Case> loadCases() {
    const auto json = nlohmann::json::parse(readTextFile(test::sourcePath("tests/fixtures/tokenizer/cases.json")));
    std::vector<Case> cases;
    for (const auto& c : json) cases.push_back({c.at("text").get<std::string>(), c.at("ids").get<std::vector<int>>()});
    return cases;
}

TEST(HuggingFaceCases, AllCasesAreThere) { EXPECT_EQ(loadCases().size(), 119u); }

TEST(HuggingFaceCases, IdsAreIdentical) {
    for (const Case& c : loadCases()) EXPECT_EQ(test::gpt2Tokenizer().encode(c.text), c.ids) << "text: " << c.text;
}

TEST(HuggingFaceCases, DecodeGivesBackTheText) {
    for (const Case& c : loadCases()) {
        const Tokenizer& tokenizer = test::gpt2Tokenizer();
        EXPECT_EQ(tokenizer.decode(tokenizer.encode(c.text)), c.text);
    }
}

TEST(HuggingFaceCases, EndOfTextIsTheLastId) {
    EXPECT_EQ(test::gpt2Tokenizer().vocabSize(), 50257);
    EXPECT_EQ(test::gpt2Tokenizer().endOfTextId(), 50256);
    EXPECT_EQ(test::gpt2Tokenizer().tokenBytes(50256), "<|endoftext|>");
}

// With allowSpecial=false the marker is ordinary text; these ids are gpt-3-encoder's, which never
// treats the marker specially.
TEST(HuggingFaceCases, EndOfTextAsPlainText) {
    const std::vector<int> plain = {27, 91, 437, 1659, 5239, 91, 29};
    EXPECT_EQ(test::gpt2Tokenizer().encode("<|endoftext|>", false), plain);
    EXPECT_EQ(test::gpt2Tokenizer().decode(plain), "<|endoftext|>");
}

}  // namespace
}  // namespace gpt2
