#pragma once
// GPT-2's byte-level BPE tokenizer, giving exactly the ids of Hugging Face's GPT2Tokenizer.
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/bpe.h"
#include "tokenizer/vocabulary.h"

namespace gpt2 {

class Tokenizer {
public:
    // vocab.json text (token string -> id, GPT-2's byte-to-unicode encoded) and merges.txt text
    // (first line "#version..." optional). Throws Error naming the offending token or line.
    static Tokenizer fromJsonAndMerges(const std::string& vocabJson, const std::string& mergesText);
    static Tokenizer fromFiles(const std::string& vocabJsonPath, const std::string& mergesPath);
    // The tokens' strings in id order and the merges ("a b") in rank order, as a GGUF file holds them
    // (tokenizer.ggml.tokens and tokenizer.ggml.merges); `label` names the source in errors.
    static Tokenizer fromTokensAndMerges(const std::vector<std::string>& tokens, const std::vector<std::string>& merges,
                                         const std::string& label);

    // allowSpecial=true: the literal "<|endoftext|>" becomes endOfTextId() (Hugging Face's default);
    // false: it is encoded as plain text (for untrusted input). Throws Error on invalid UTF-8, naming
    // the byte offset.
    std::vector<int> encode(std::string_view utf8, bool allowSpecial = true) const;
    // Raw bytes joined: invalid UTF-8 where the ids split a character (StreamDecoder handles that).
    std::string decode(const std::vector<int>& ids) const;
    // Raw bytes of one token; throws Error for ids outside 0..vocabSize()-1.
    const std::string& tokenBytes(int id) const;
    int vocabSize() const;
    int endOfTextId() const;

private:
    Tokenizer(std::vector<std::string> tokens, BytePairEncoder bpe, int endOfTextId);
    static Tokenizer parse(const std::string& vocabJson, const std::string& vocabName, const std::string& mergesText,
                           const std::string& mergesName);
    static Tokenizer make(Vocabulary vocab, const std::string& vocabName, const std::string& mergesText,
                          const std::string& mergesName);
    void encodeText(std::string_view text, std::vector<int>& ids) const;

    std::vector<std::string> tokens_;  // raw bytes of each id
    BytePairEncoder bpe_;
    int endOfTextId_;
};

// Decodes generated ids one at a time without ever emitting part of a UTF-8 character: a token that
// ends mid-character is held back until a later token completes it.
class StreamDecoder {
public:
    // The tokenizer must outlive the decoder.
    explicit StreamDecoder(const Tokenizer& tokenizer);
    // The complete UTF-8 text this token finishes (may be empty). Bytes that can never form a
    // character become U+FFFD, one per maximal ill-formed subpart, as Python's errors="replace".
    std::string push(int id);
    // What is held back at the end, as U+FFFD (an unfinished character); empties the decoder for reuse.
    std::string flush();

private:
    const Tokenizer& tokenizer_;
    std::string pending_;  // an unfinished character's bytes, at most 3
};

}  // namespace gpt2
