// Arbitrary bytes as a tokenizer's two files: vocab.json up to the first NUL byte, merges.txt after
// it (empty when there is no NUL). A tokenizer that is accepted must encode and decode losslessly
// whatever its merges are.
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

GPT2_FUZZ_ENTRY(vocab)(const std::uint8_t* data, std::size_t size) {
    const char* chars = reinterpret_cast<const char*>(data);
    const void* nul = std::memchr(chars, '\0', size);
    const std::size_t split = nul ? static_cast<std::size_t>(static_cast<const char*>(nul) - chars) : size;
    const std::string vocabJson(chars, split);
    const std::string mergesText = split < size ? std::string(chars + split + 1, size - split - 1) : std::string();

    std::optional<gpt2::Tokenizer> built;
    try {
        built.emplace(gpt2::Tokenizer::fromJsonAndMerges(vocabJson, mergesText));
    } catch (const gpt2::Error&) {
        return 0;
    }
    const gpt2::Tokenizer& tokenizer = *built;
    GPT2_FUZZ_CHECK(tokenizer.vocabSize() >= 257);
    GPT2_FUZZ_CHECK(tokenizer.endOfTextId() >= 0 && tokenizer.endOfTextId() < tokenizer.vocabSize());
    GPT2_FUZZ_CHECK(tokenizer.tokenBytes(tokenizer.endOfTextId()) == "<|endoftext|>");
    static const char* const samples[] = {
        "Hello, world! It's the quick brown fox's 12345 jumps   over\tthe lazy dog.\n",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa abababababab <|endoftext|> ll've're",
        "Grüße, Καλη, こんにちは 🙂👍 \u00a0\u2003 end",
    };
    for (const char* sample : samples) {
        for (const bool allowSpecial : {true, false}) {
            const std::vector<int> ids = tokenizer.encode(sample, allowSpecial);
            for (const int id : ids) GPT2_FUZZ_CHECK(id >= 0 && id < tokenizer.vocabSize());
            GPT2_FUZZ_CHECK(tokenizer.decode(ids) == sample);
        }
    }
    // The merges text itself, when it is UTF-8: text made of the vocab's own tokens.
    std::vector<int> ids;
    try {
        ids = tokenizer.encode(mergesText);
    } catch (const gpt2::Error&) {
        return 0;
    }
    GPT2_FUZZ_CHECK(tokenizer.decode(ids) == mergesText);
    return 0;
}
