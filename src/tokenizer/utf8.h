#pragma once
// UTF-8 reading and writing by the rules of Unicode Table 3-7 (no overlongs, no surrogates, ≤ U+10FFFF).
#include <cstddef>
#include <string>
#include <string_view>

namespace gpt2 {

struct Utf8Char {
    enum class Status { Complete, Truncated, Invalid };
    Status status;
    char32_t codePoint;  // meaningful only when Complete
    // Complete: bytes of the character. Truncated: all remaining bytes, a prefix that more bytes could
    // complete. Invalid: the maximal ill-formed subpart, which a decoder replaces with one U+FFFD.
    std::size_t length;
};

// Reads the character starting at text[pos]; pos must be < text.size().
Utf8Char readUtf8(std::string_view text, std::size_t pos);

// Offset of the first byte that does not start a complete, valid character; npos when all is valid.
std::size_t findInvalidUtf8(std::string_view text);

void appendUtf8(std::string& out, char32_t codePoint);

}  // namespace gpt2
