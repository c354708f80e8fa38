#include "tokenizer/byte_level.h"

#include <array>
#include <cstdint>

#include "tokenizer/utf8.h"

namespace gpt2 {
namespace {

// bytes_to_unicode() keeps the printable Latin-1 bytes as themselves and maps the other 68 bytes,
// in increasing order, to U+0100 onwards; so every byte character lies below U+0100 + 68.
constexpr char32_t kCodePointLimit = 0x100 + 68;

std::array<std::int16_t, kCodePointLimit> buildCodePointToByte() {
    std::array<std::int16_t, kCodePointLimit> table;
    table.fill(-1);
    const auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; };
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) table[printable(b) ? b : next++] = static_cast<std::int16_t>(b);
    return table;
}

}  // namespace

std::optional<std::string> byteLevelToBytes(std::string_view tokenText) {
    static const std::array<std::int16_t, kCodePointLimit> codePointToByte = buildCodePointToByte();
    std::string bytes;
    for (std::size_t pos = 0; pos < tokenText.size();) {
        const Utf8Char c = readUtf8(tokenText, pos);
        if (c.status != Utf8Char::Status::Complete || c.codePoint >= kCodePointLimit ||
            codePointToByte[c.codePoint] < 0)
            return std::nullopt;
        bytes += static_cast<char>(codePointToByte[c.codePoint]);
        pos += c.length;
    }
    return bytes;
}

}  // namespace gpt2
