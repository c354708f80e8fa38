#include "weights-tools/packer.h"

#include <fstream>
#include <vector>

#include "format/checkpoint.h"
#include "format/safetensors_writer.h"
#include "model/weight_packing.h"
#include "tokenizer/tokenizer.h"
#include "util/crc32.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

// The CRC is only known once the payload is written; the header gets this fixed-width placeholder
// and the digits are patched in place afterwards.
constexpr const char* kCrcPlaceholder = "0000000000";

int paddedCols(int cols) { return (cols + 3) / 4 * 4; }

std::uint32_t payloadCrc(const std::string& file, std::uint64_t dataOffset, std::uint64_t bytes) {
    std::ifstream in(file, std::ios::binary);
    in.seekg(std::streamoff(dataOffset));
    Crc32 crc;
    std::vector<char> buffer(1 << 20);
    std::uint64_t left = bytes;
    while (left > 0) {
        const std::size_t n = std::size_t(std::min<std::uint64_t>(left, buffer.size()));
        if (!in.read(buffer.data(), std::streamsize(n))) fail(file, ": cannot read the payload back (truncated?)");
        crc.update(reinterpret_cast<const std::uint8_t*>(buffer.data()), n);
        left -= n;
    }
    return crc.value();
}

}  // namespace

PackSummary packCheckpoint(const std::string& inDir, const std::string& outFile, bool half) {
    const HuggingFaceCheckpoint checkpoint(inDir);
    const ModelConfig& config = checkpoint.config();
    PackSummary summary;
    summary.config = config;

    std::map<std::string, std::string> metadata = {{"format", kPackedFormatName},
                                                   {"format_version", std::to_string(kPackedFormatVersion)},
                                                   {"config", modelConfigToJson(config)},
                                                   {"payload_crc32", kCrcPlaceholder}};
    const std::string vocab = joinPath(inDir, "vocab.json"), merges = joinPath(inDir, "merges.txt");
    if (fileExists(vocab) && fileExists(merges)) {
        metadata["vocab"] = readTextFile(vocab);
        metadata["merges"] = readTextFile(merges);
        Tokenizer::fromJsonAndMerges(metadata["vocab"], metadata["merges"]);  // refuse a broken tokenizer now
        summary.hasTokenizer = true;
    }

    const std::vector<MatrixSpec> specs = engineMatrices(config);
    std::vector<TensorToWrite> tensors;
    for (const MatrixSpec& spec : specs) {
        const DType dtype = half && spec.rows > 1 ? DType::F16 : DType::F32;
        tensors.push_back({spec.name, dtype, {spec.rows, paddedCols(spec.cols)}});
        summary.payloadBytes += std::uint64_t(spec.rows) * std::uint64_t(paddedCols(spec.cols)) * dtypeSize(dtype);
    }
    metadata["payload_bytes"] = std::to_string(summary.payloadBytes);
    writeSafetensors(outFile, tensors, [&](std::size_t i) {
        const MatrixSpec& spec = specs[i];
        const std::vector<float> matrix = packMatrix(config, spec, checkpoint.read(spec.name, spec.sourceShape));
        const int width = paddedCols(spec.cols);
        std::vector<float> padded(std::size_t(spec.rows) * std::size_t(width), 0.0f);
        for (std::int64_t r = 0; r < spec.rows; ++r)
            std::copy(matrix.begin() + r * spec.cols, matrix.begin() + (r + 1) * spec.cols, padded.begin() + r * width);
        return padded;
    }, metadata);
    summary.tensors = int(tensors.size());

    const SafetensorsFile written(outFile);
    summary.payloadCrc32 = payloadCrc(outFile, written.header().dataOffset, summary.payloadBytes);
    std::fstream patch(outFile, std::ios::binary | std::ios::in | std::ios::out);
    std::string header(std::size_t(written.header().dataOffset), '\0');
    patch.read(header.data(), std::streamsize(header.size()));
    const std::string key = std::string("\"payload_crc32\":\"") + kCrcPlaceholder + "\"";
    const std::size_t at = header.find(key);
    if (at == std::string::npos) fail(outFile, ": checksum placeholder not found in the header");
    std::string digits = std::to_string(summary.payloadCrc32);
    digits.insert(0, 10 - digits.size(), '0');
    patch.seekp(std::streamoff(at + key.size() - 11));
    patch.write(digits.data(), 10);
    if (!patch) fail(outFile, ": writing the checksum failed");
    return summary;
}

PackSummary verifyPacked(const std::string& file) {
    const SafetensorsFile packed(file);
    const SafetensorsHeader& header = packed.header();
    const PackedMetadata meta = parsePackedMetadata(header);
    PackSummary summary;
    summary.config = meta.config;
    std::uint64_t offset = 0;
    for (const MatrixSpec& spec : engineMatrices(meta.config)) {
        const TensorInfo& info = header.tensor(spec.name);
        const std::vector<std::int64_t> shape = {spec.rows, paddedCols(spec.cols)};
        if (info.shape != shape)
            fail(file, ": tensor ", spec.name, " has shape ", shapeText(info.shape), ", expected ", shapeText(shape));
        if (info.dtype == DType::BF16 || (spec.rows == 1 && info.dtype != DType::F32))
            fail(file, ": tensor ", spec.name, " has dtype ", dtypeName(info.dtype), "; packed files hold F32 (vectors) or F16/F32 matrices");
        if (info.begin != offset) fail(file, ": tensor ", spec.name, " is not where the payload continues (byte ", info.begin, ", expected ", offset, ")");
        offset = info.end;
        ++summary.tensors;
    }
    if (summary.tensors != int(header.tensors.size())) fail(file, ": holds tensors that are not engine matrices of its config");
    if (offset != meta.payloadBytes) fail(file, ": tensors cover ", offset, " bytes, metadata says ", meta.payloadBytes);
    summary.payloadBytes = meta.payloadBytes;
    summary.payloadCrc32 = payloadCrc(file, header.dataOffset, meta.payloadBytes);
    if (summary.payloadCrc32 != meta.payloadCrc32)
        fail(file, ": payload checksum mismatch (CRC-32 ", summary.payloadCrc32, ", metadata says ", meta.payloadCrc32,
             "); the file is corrupt");
    if (!meta.vocabJson.empty()) {
        Tokenizer::fromJsonAndMerges(meta.vocabJson, meta.mergesText);
        summary.hasTokenizer = true;
    }
    return summary;
}

}  // namespace gpt2
