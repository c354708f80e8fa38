#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace gpt2 {
namespace {

constexpr char32_t kReplacementCharacter = 0xFFFD;

}  // namespace

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

std::string StreamDecoder::push(int id) {
    pending_ += tokenizer_.tokenBytes(id);
    std::string text;
    std::size_t pos = 0;
    while (pos < pending_.size()) {
        const Utf8Char c = readUtf8(pending_, pos);
        if (c.status == Utf8Char::Status::Truncated) break;
        if (c.status == Utf8Char::Status::Complete)
            text.append(pending_, pos, c.length);
        else
            appendUtf8(text, kReplacementCharacter);
        pos += c.length;
    }
    pending_.erase(0, pos);
    return text;
}

std::string StreamDecoder::flush() {
    std::string text;
    if (!pending_.empty()) appendUtf8(text, kReplacementCharacter);
    pending_.clear();
    return text;
}

}  // namespace gpt2
