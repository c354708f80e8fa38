#include "tokenizer/utf8.h"

namespace gpt2 {

Utf8Char readUtf8(std::string_view text, std::size_t pos) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[pos + i]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80) return {Utf8Char::Status::Complete, lead, 1};

    std::size_t length;
    char32_t codePoint;
    // The second byte's range is narrower after some leads: that is what excludes overlongs,
    // surrogates and code points above U+10FFFF.
    unsigned char secondMin = 0x80, secondMax = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
        codePoint = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        codePoint = lead & 0x0F;
        if (lead == 0xE0) secondMin = 0xA0;
        if (lead == 0xED) secondMax = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        codePoint = lead & 0x07;
        if (lead == 0xF0) secondMin = 0x90;
        if (lead == 0xF4) secondMax = 0x8F;
    } else {
        return {Utf8Char::Status::Invalid, 0, 1};
    }

    for (std::size_t i = 1; i < length; ++i) {
        if (pos + i >= text.size()) return {Utf8Char::Status::Truncated, 0, i};
        const unsigned char next = byte(i);
        const unsigned char min = i == 1 ? secondMin : 0x80;
        const unsigned char max = i == 1 ? secondMax : 0xBF;
        if (next < min || next > max) return {Utf8Char::Status::Invalid, 0, i};
        codePoint = (codePoint << 6) | (next & 0x3F);
    }
    return {Utf8Char::Status::Complete, codePoint, length};
}

std::size_t findInvalidUtf8(std::string_view text) {
    for (std::size_t pos = 0; pos < text.size();) {
        if (static_cast<unsigned char>(text[pos]) < 0x80) {
            ++pos;
            continue;
        }
        const Utf8Char c = readUtf8(text, pos);
        if (c.status != Utf8Char::Status::Complete) return pos;
        pos += c.length;
    }
    return std::string_view::npos;
}

void appendUtf8(std::string& out, char32_t codePoint) {
    if (codePoint < 0x80) {
        out += static_cast<char>(codePoint);
    } else if (codePoint < 0x800) {
        out += static_cast<char>(0xC0 | (codePoint >> 6));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else if (codePoint < 0x10000) {
        out += static_cast<char>(0xE0 | (codePoint >> 12));
        out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (codePoint >> 18));
        out += static_cast<char>(0x80 | ((codePoint >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    }
}

}  // namespace gpt2
