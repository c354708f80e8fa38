#include "tokenizer/tokenizer.h"

#include "tokenizer/pretokenizer.h"
#include "tokenizer/utf8.h"
#include "tokenizer/vocabulary.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

constexpr const char* kEndOfText = "<|endoftext|>";

}  // namespace

Tokenizer::Tokenizer(std::vector<std::string> tokens, BytePairEncoder bpe, int endOfTextId)
    : tokens_(std::move(tokens)), bpe_(std::move(bpe)), endOfTextId_(endOfTextId) {}

Tokenizer Tokenizer::parse(const std::string& vocabJson, const std::string& vocabName, const std::string& mergesText,
                           const std::string& mergesName) {
    return make(parseVocabJson(vocabJson, vocabName), vocabName, mergesText, mergesName);
}

Tokenizer Tokenizer::make(Vocabulary vocab, const std::string& vocabName, const std::string& mergesText,
                          const std::string& mergesName) {
    const auto endOfText = vocab.ids.find(kEndOfText);
    if (endOfText == vocab.ids.end()) fail(vocabName, ": has no \"", kEndOfText, "\" token; pass GPT-2's vocab.json");
    BytePairEncoder bpe(vocab.byteIds, parseMerges(mergesText, vocab, mergesName));
    return Tokenizer(std::move(vocab.tokens), std::move(bpe), endOfText->second);
}

Tokenizer Tokenizer::fromJsonAndMerges(const std::string& vocabJson, const std::string& mergesText) {
    return parse(vocabJson, "vocab.json", mergesText, "merges.txt");
}

Tokenizer Tokenizer::fromTokensAndMerges(const std::vector<std::string>& tokens, const std::vector<std::string>& merges,
                                         const std::string& label) {
    std::string mergesText;
    for (const std::string& merge : merges) {
        if (merge.find('\n') != std::string::npos) fail(label, ": merge \"", merge, "\" holds a line break");
        mergesText += merge + '\n';
    }
    return make(vocabularyFromTokens(tokens, label + " tokenizer.ggml.tokens"), label + " tokenizer.ggml.tokens",
                mergesText, label + " tokenizer.ggml.merges");
}

Tokenizer Tokenizer::fromFiles(const std::string& vocabJsonPath, const std::string& mergesPath) {
    return parse(readTextFile(vocabJsonPath), vocabJsonPath, readTextFile(mergesPath), mergesPath);
}

std::vector<int> Tokenizer::encode(std::string_view utf8, bool allowSpecial) const {
    const std::size_t invalid = findInvalidUtf8(utf8);
    if (invalid != std::string_view::npos)
        fail("cannot tokenize: the text is not valid UTF-8 at byte offset ", invalid, " (byte 0x", std::hex,
             static_cast<int>(static_cast<unsigned char>(utf8[invalid])), "); pass UTF-8 encoded text");

    std::vector<int> ids;
    if (!allowSpecial) {
        encodeText(utf8, ids);
        return ids;
    }
    const std::string_view special = kEndOfText;
    std::size_t start = 0;
    for (std::size_t found; (found = utf8.find(special, start)) != std::string_view::npos;
         start = found + special.size()) {
        encodeText(utf8.substr(start, found - start), ids);
        ids.push_back(endOfTextId_);
    }
    encodeText(utf8.substr(start), ids);
    return ids;
}

void Tokenizer::encodeText(std::string_view text, std::vector<int>& ids) const {
    Pretokenizer pretokenizer(text);
    for (std::string_view piece; pretokenizer.next(piece);) bpe_.encodePiece(piece, ids);
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
    std::string bytes;
    for (const int id : ids) bytes += tokenBytes(id);
    return bytes;
}

const std::string& Tokenizer::tokenBytes(int id) const {
    if (id < 0 || id >= vocabSize())
        fail("token id ", id, " is outside the vocabulary of ", vocabSize(), " tokens (valid ids: 0..", vocabSize() - 1,
             "); check that the model and tokenizer match");
    return tokens_[id];
}

int Tokenizer::vocabSize() const { return static_cast<int>(tokens_.size()); }

int Tokenizer::endOfTextId() const { return endOfTextId_; }

}  // namespace gpt2
