#pragma once
// The three character classes GPT-2's pre-tokenization regex tells apart.
#include <cstdint>

namespace gpt2 {

enum class CharClass : std::uint8_t {
    Other,   // [^\s\p{L}\p{N}]: punctuation, symbols, marks, controls, unassigned
    Letter,  // \p{L}: Lu Ll Lt Lm Lo
    Number,  // \p{N}: Nd Nl No
    Space,   // \s: White_Space, as Python's `regex` module defines it
};

CharClass charClass(char32_t codePoint);

}  // namespace gpt2
