#pragma once
// GPT-2's pre-tokenization, the regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// written out by hand over code points, so that it needs neither std::regex nor ICU.
#include <cstddef>
#include <string_view>

#include "tokenizer/unicode_class.h"

namespace gpt2 {

// Walks text (valid UTF-8; the caller checks) piece by piece, without allocating; the pieces cover
// the text exactly, in order.
class Pretokenizer {
public:
    explicit Pretokenizer(std::string_view text) : text_(text) {}

    // Sets piece to the next piece; false at the end of the text.
    bool next(std::string_view& piece);

private:
    struct Char {
        char32_t value;
        CharClass cls;
        std::size_t length;
    };
    Char charAt(std::size_t pos) const;
    std::size_t contractionLength(std::size_t pos) const;
    std::size_t runEnd(std::size_t pos, CharClass cls) const;
    std::size_t whitespaceEnd(std::size_t pos) const;
    std::size_t pieceEnd(std::size_t pos) const;

    std::string_view text_;
    std::size_t pos_ = 0;
};

}  // namespace gpt2
