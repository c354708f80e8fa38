// Pre-tokenization against Python's `regex` module running GPT-2's pattern (the expected pieces
// below are its findall output), on the cases where a hand-written matcher could go wrong.
#include <gtest/gtest.h>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/unicode_class.h"

namespace gpt2 {
namespace {

struct SplitCase {
    std::string text;
    std::vector<std::string> pieces;
};

std::vector<std::string> split(std::string_view text) {
    std::vector<std::string> pieces;
    Pretokenizer pretokenizer(text);
    for (std::string_view piece; pretokenizer.next(piece);) pieces.emplace_back(piece);
    return pieces;
}

TEST(Pretokenizer, SplitsLikeGpt2Regex) {
    const std::vector<SplitCase> cases = {
        // contractions split off, wherever they are
        {"I'm O'Neil's", {"I", "'m", " O", "'", "Neil", "'s"}},
        // only lowercase contractions
        {"I'LL", {"I", "'", "LL"}},
        {"'re've'll'd'x", {"'re", "'ve", "'ll", "'d", "'", "x"}},
        // a run of spaces leaves its last space to the word
        {"a  b", {"a", " ", " b"}},
        {"a   \n  b", {"a", "   \n ", " b"}},
        // a newline does not join the word after it
        {"a\n\nb", {"a", "\n", "\n", "b"}},
        // whitespace at the end stays whole
        {"  ", {"  "}},
        {"x  ", {"x", "  "}},
        {" \t\n", {" \t\n"}},
        // \s is Unicode White_Space: U+0085 and U+3000 are space, U+FEFF and U+200B are not
        {"\u0085\u0085a", {"\u0085", "\u0085", "a"}},
        {"\uFEFF\uFEFFa", {"\uFEFF\uFEFF", "a"}},
        {"\u200B\u200Bx", {"\u200B\u200B", "x"}},
        {"a\u3000\u3000b", {"a", "\u3000", "\u3000", "b"}},
        // only U+0020 joins the run after it
        {"x\u00A0y", {"x", "\u00A0", "y"}},
        {"a\u2028b", {"a", "\u2028", "b"}},
        // \p{N} is Nd, Nl and No
        {"\u00BD \u0663 \u216B", {"\u00BD", " \u0663", " \u216B"}},
        // combining marks are neither letters nor numbers
        {"e\u0301", {"e", "\u0301"}},
        {" \u0301x", {" \u0301", "x"}},
        {" 'quoted'", {" '", "quoted", "'"}},
        {"?!? 123abc", {"?!?", " 123", "abc"}},
        // astral code points: an emoji is other, a CJK Extension B ideograph a letter
        {"\U0001F600\U0001F600 \U00020000x", {"\U0001F600\U0001F600", " \U00020000x"}},
    };
    for (const SplitCase& c : cases) EXPECT_EQ(split(c.text), c.pieces) << "text: " << c.text;
}

TEST(Pretokenizer, EmptyTextHasNoPieces) { EXPECT_TRUE(split("").empty()); }

TEST(UnicodeClass, GeneratedTablesCoverAllCategories) {
    EXPECT_EQ(charClass(U'a'), CharClass::Letter);
    EXPECT_EQ(charClass(0x01C5), CharClass::Letter);   // Lt
    EXPECT_EQ(charClass(0x02B0), CharClass::Letter);   // Lm
    EXPECT_EQ(charClass(0x4E00), CharClass::Letter);   // Lo, first of a First/Last block
    EXPECT_EQ(charClass(0x9FFF), CharClass::Letter);   // Lo, last of that block
    EXPECT_EQ(charClass(0x2A6DF), CharClass::Letter);  // CJK Extension B, last
    EXPECT_EQ(charClass(U'7'), CharClass::Number);
    EXPECT_EQ(charClass(0x2160), CharClass::Number);  // Nl
    EXPECT_EQ(charClass(0x00B2), CharClass::Number);  // No
    EXPECT_EQ(charClass(0x1680), CharClass::Space);
    EXPECT_EQ(charClass(0x205F), CharClass::Space);
    EXPECT_EQ(charClass(0x180E), CharClass::Other);    // no longer White_Space since Unicode 6.3
    EXPECT_EQ(charClass(0x0301), CharClass::Other);    // Mn
    EXPECT_EQ(charClass(0x1F600), CharClass::Other);   // So
    EXPECT_EQ(charClass(0xE000), CharClass::Other);    // Co
    EXPECT_EQ(charClass(0x10FFFF), CharClass::Other);  // Cn
}

}  // namespace
}  // namespace gpt2
