#include "tokenizer/pretokenizer.h"

#include "tokenizer/utf8.h"

namespace gpt2 {

bool Pretokenizer::next(std::string_view& piece) {
    if (pos_ >= text_.size()) return false;
    const std::size_t end = pieceEnd(pos_);
    piece = text_.substr(pos_, end - pos_);
    pos_ = end;
    return true;
}

Pretokenizer::Char Pretokenizer::charAt(std::size_t pos) const {
    const auto lead = static_cast<unsigned char>(text_[pos]);
    if (lead < 0x80) return {lead, charClass(lead), 1};
    const Utf8Char c = readUtf8(text_, pos);
    return {c.codePoint, charClass(c.codePoint), c.length};
}

// 's|'t|'re|'ve|'m|'ll|'d — lowercase only, as in GPT-2's pattern (no IGNORECASE flag). All ASCII,
// so bytes compare directly: no byte of a multi-byte character equals an ASCII one.
std::size_t Pretokenizer::contractionLength(std::size_t pos) const {
    const std::string_view rest = text_.substr(pos);
    if (rest.size() < 2 || rest[0] != '\'') return 0;
    const char first = rest[1];
    if (first == 's' || first == 't' || first == 'm' || first == 'd') return 2;
    if (rest.size() < 3) return 0;
    const char second = rest[2];
    if ((first == 'r' && second == 'e') || (first == 'v' && second == 'e') || (first == 'l' && second == 'l')) return 3;
    return 0;
}

std::size_t Pretokenizer::runEnd(std::size_t pos, CharClass cls) const {
    while (pos < text_.size()) {
        const Char c = charAt(pos);
        if (c.cls != cls) break;
        pos += c.length;
    }
    return pos;
}

// `\s+(?!\S)` backtracks one character off a run that a non-space follows, leaving that last space to
// start the next piece (" word"); when the run is a single character, `\s+` takes it instead.
std::size_t Pretokenizer::whitespaceEnd(std::size_t pos) const {
    const std::size_t start = pos;
    std::size_t lastStart = pos;
    while (pos < text_.size()) {
        const Char c = charAt(pos);
        if (c.cls != CharClass::Space) return lastStart > start ? lastStart : pos;
        lastStart = pos;
        pos += c.length;
    }
    return pos;
}

std::size_t Pretokenizer::pieceEnd(std::size_t pos) const {
    if (const std::size_t length = contractionLength(pos)) return pos + length;
    const Char c = charAt(pos);
    if (c.cls != CharClass::Space) return runEnd(pos, c.cls);
    // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: one U+0020 joins the run after it.
    if (c.value == U' ' && pos + 1 < text_.size()) {
        const CharClass after = charAt(pos + 1).cls;
        if (after != CharClass::Space) return runEnd(pos + 1, after);
    }
    return whitespaceEnd(pos);
}

}  // namespace gpt2
