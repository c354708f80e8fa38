#include "model/weight_file.h"

#include <algorithm>

#include "util/error.h"

namespace gpt2 {

WeightFile::WeightFile(SafetensorsHeader header, ModelWeights& weights)
    : header_(std::move(header)), weights_(weights), packed_(isPackedModel(header_)) {
    if (packed_) {
        const PackedMetadata meta = parsePackedMetadata(header_);
        expectedCrc_ = meta.payloadCrc32;
        payloadBytes_ = meta.payloadBytes;
    }
    for (const auto& [name, info] : header_.tensors)
        if (packed_ || weights_.wants(name)) wanted_.push_back(&info);
    std::sort(wanted_.begin(), wanted_.end(), [](auto* a, auto* b) { return a->begin < b->begin; });
}

void WeightFile::upload(const TensorInfo& info, const std::uint8_t* bytes) {
    if (packed_) {
        // The payload is the tensors back to back from offset 0; hashing them in order covers it all.
        if (info.begin != hashed_)
            fail(header_.label, ": packed tensor ", info.name, " starts at byte ", info.begin, ", expected ", hashed_,
                 " (tensors must be contiguous and uploaded in file order)");
        crc_.update(bytes, std::size_t(info.end - info.begin));
        hashed_ = info.end;
        weights_.uploadPacked(info, bytes, header_.label);
        return;
    }
    requireFloatTensor(info, header_.label);
    weights_.upload(info.name, info.shape, info.dtype, bytes);
}

void WeightFile::finish() const {
    if (!packed_) return;
    if (hashed_ != payloadBytes_)
        fail(header_.label, ": ", hashed_, " payload bytes arrived, the metadata promises ", payloadBytes_,
             " (truncated file?)");
    if (crc_.value() != expectedCrc_)
        fail(header_.label, ": payload checksum mismatch (CRC-32 ", crc_.value(), ", metadata says ", expectedCrc_,
             "); the file is corrupt, download or pack it again");
}

}  // namespace gpt2
