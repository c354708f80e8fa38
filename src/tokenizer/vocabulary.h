#pragma once
// Parsing of GPT-2's two tokenizer files, vocab.json and merges.txt, into raw-byte tokens and id merges.
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/bpe.h"

namespace gpt2 {

struct Vocabulary {
    std::vector<std::string> tokens;           // raw bytes of each id; ids are 0..size-1
    std::unordered_map<std::string, int> ids;  // raw bytes -> id
    std::array<int, 256> byteIds;              // the single-byte tokens, which every byte-level vocab has
};

// sourceName (a path, or "vocab.json") starts every error message.
Vocabulary parseVocabJson(const std::string& json, const std::string& sourceName);
// The same from the tokens' strings in id order (a GGUF file's tokenizer.ggml.tokens).
Vocabulary vocabularyFromTokens(const std::vector<std::string>& texts, const std::string& sourceName);

// In rank order. The optional first line "#version: ..." is skipped, as are blank lines.
std::vector<BpeMerge> parseMerges(const std::string& text, const Vocabulary& vocab, const std::string& sourceName);

}  // namespace gpt2
