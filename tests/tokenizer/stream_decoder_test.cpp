// Streaming decode of texts whose characters GPT-2 splits across tokens.
#include <gtest/gtest.h>

#include "test_support.h"
#include "tokenizer/utf8.h"
#include "util/error.h"

namespace gpt2 {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";

int idOfBytes(const std::string& bytes) {
    const Tokenizer& tokenizer = test::gpt2Tokenizer();
    for (int id = 0; id < tokenizer.vocabSize(); ++id)
        if (tokenizer.tokenBytes(id) == bytes) return id;
    ADD_FAILURE() << "no token has the bytes of \"" << bytes << "\"";
    return 0;
}

class StreamDecoderTexts : public testing::TestWithParam<std::string> {};

TEST_P(StreamDecoderTexts, EveryPieceIsWholeCharactersAndTheyJoinToTheText) {
    const Tokenizer& tokenizer = test::gpt2Tokenizer();
    const std::vector<int> ids = tokenizer.encode(GetParam());
    bool someTokenSplitsACharacter = false;
    StreamDecoder decoder(tokenizer);
    std::string joined;
    for (const int id : ids) {
        someTokenSplitsACharacter |= findInvalidUtf8(tokenizer.tokenBytes(id)) != std::string::npos;
        const std::string piece = decoder.push(id);
        EXPECT_EQ(findInvalidUtf8(piece), std::string::npos) << "after token " << id;
        EXPECT_EQ(piece.find(kReplacement), std::string::npos) << "after token " << id;
        joined += piece;
    }
    EXPECT_EQ(decoder.flush(), "");
    EXPECT_EQ(joined, GetParam());
    EXPECT_TRUE(someTokenSplitsACharacter) << "the text does not exercise holding back";
}

INSTANTIATE_TEST_SUITE_P(
    SplitCharacters, StreamDecoderTexts,
    testing::Values("👨\u200d👩\u200d👧\u200d👦 family, 🏳️\u200d🌈 flag",  // ZWJ sequences
                    "👍🏽 👍🏿 👋🏻 thumbs and waves",                        // skin tones
                    "我爱自然语言处理。こんにちは世界 안녕하세요",                        // CJK and Hangul
                    "e\u0301 a\u0308 n\u0303 Z\u0351\u0352\u0353 ह\u093F\u0902",          // combining marks
                    "🇫🇷🇯🇵 flags 🤖 and 😀 mixed with text ½ ∑ ∞"));

TEST(StreamDecoder, UnfinishedCharacterAtTheEndBecomesOneReplacement) {
    StreamDecoder decoder(test::gpt2Tokenizer());
    EXPECT_EQ(decoder.push(idOfBytes("a")), "a");
    EXPECT_EQ(decoder.push(idOfBytes("\xE2")), "");
    EXPECT_EQ(decoder.push(idOfBytes("\x82")), "");
    EXPECT_EQ(decoder.flush(), kReplacement);
    EXPECT_EQ(decoder.flush(), "");
}

// As Python's bytes.decode("utf-8", errors="replace"): one U+FFFD per maximal ill-formed subpart.
TEST(StreamDecoder, BytesThatCanNeverFormACharacterBecomeReplacements) {
    StreamDecoder decoder(test::gpt2Tokenizer());
    EXPECT_EQ(decoder.push(idOfBytes("\xE2")), "");
    EXPECT_EQ(decoder.push(idOfBytes("\x82")), "");
    EXPECT_EQ(decoder.push(idOfBytes("a")), kReplacement + "a");
    EXPECT_EQ(decoder.push(idOfBytes("\x80")), kReplacement);
    EXPECT_EQ(decoder.push(idOfBytes("\xF0")), "");
    EXPECT_EQ(decoder.push(idOfBytes("\x82")), kReplacement + kReplacement);
}

TEST(StreamDecoder, OutOfRangeIdThrows) {
    StreamDecoder decoder(test::gpt2Tokenizer());
    EXPECT_THROW(decoder.push(50257), Error);
}

}  // namespace
}  // namespace gpt2
