#pragma once
// CRC-32 (IEEE 802.3, as zlib.crc32 and `gzip` compute it), incremental: the packed model file's
// payload checksum, computed while its tensors stream in.
#include <cstddef>
#include <cstdint>

namespace gpt2 {

class Crc32 {
public:
    void update(const std::uint8_t* bytes, std::size_t size);
    std::uint32_t value() const { return ~state_; }

private:
    std::uint32_t state_ = 0xFFFFFFFFu;
};

}  // namespace gpt2
