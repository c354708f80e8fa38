#include "util/crc32.h"

#include <array>

namespace gpt2 {
namespace {

std::array<std::uint32_t, 256> makeTable() {
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    return table;
}

}  // namespace

void Crc32::update(const std::uint8_t* bytes, std::size_t size) {
    static const std::array<std::uint32_t, 256> table = makeTable();
    std::uint32_t c = state_;
    for (std::size_t i = 0; i < size; ++i) c = table[(c ^ bytes[i]) & 0xFFu] ^ (c >> 8);
    state_ = c;
}

}  // namespace gpt2
