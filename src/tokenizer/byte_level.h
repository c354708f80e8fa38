#pragma once
// GPT-2 stores tokens as text in which every byte is one printable character (bytes_to_unicode in
// OpenAI's encoder.py), so that vocab.json and merges.txt hold no spaces or control characters.
#include <optional>
#include <string>
#include <string_view>

namespace gpt2 {

// Maps a token's byte-level text (UTF-8) back to its raw bytes; nullopt when a character is not one
// of the 256 byte characters.
std::optional<std::string> byteLevelToBytes(std::string_view tokenText);

}  // namespace gpt2
