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

PackedWeights parsePackedWeights(const std::string& name) {
    if (name == "fp32") return PackedWeights::Fp32;
    if (name == "fp16") return PackedWeights::Fp16;
    if (name == "int8") return PackedWeights::Int8;
    fail("--dtype must be fp16, fp32 or int8, got \"", name, "\"");
}

PackSummary packCheckpoint(const std::string& inDir, const std::string& outFile, PackedWeights weights) {
    const HuggingFaceCheckpoint checkpoint(inDir);
    const ModelConfig& config = checkpoint.config();
    PackSummary summary;
    summary.config = config;

    const bool int8 = weights == PackedWeights::Int8;
    std::map<std::string, std::string> metadata = {
        {"format", kPackedFormatName},
        {"format_version", std::to_string(int8 ? kPackedFormatInt8Version : kPackedFormatFirstVersion)},
        {"config", modelConfigToJson(config)},
        {"payload_crc32", kCrcPlaceholder}};
    const std::string vocab = joinPath(inDir, "vocab.json"), merges = joinPath(inDir, "merges.txt");
    if (fileExists(vocab) && fileExists(merges)) {
        metadata["vocab"] = readTextFile(vocab);
        metadata["merges"] = readTextFile(merges);
        Tokenizer::fromJsonAndMerges(metadata["vocab"], metadata["merges"]);  // refuse a broken tokenizer now
        summary.hasTokenizer = true;
    }

    // Each tensor to write: its matrix, and whether it is that matrix's int8 scales.
    const std::vector<MatrixSpec> specs = engineMatrices(config);
    std::vector<TensorToWrite> tensors;
    std::vector<std::pair<std::size_t, bool>> sources;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const MatrixSpec& spec = specs[i];
        const DType dtype = int8 && quantizedWithInt8(spec)                   ? DType::I8
                            : weights != PackedWeights::Fp32 && spec.rows > 1 ? DType::F16
                                                                              : DType::F32;
        if (dtype == DType::I8) {
            tensors.push_back({scalesTensorName(spec.name), DType::F32, {int8Channels(spec)}});
            sources.emplace_back(i, true);
        }
        tensors.push_back({spec.name, dtype, packedShape(spec, dtype)});
        sources.emplace_back(i, false);
    }
    for (const TensorToWrite& t : tensors) {
        std::uint64_t elements = 1;
        for (auto d : t.shape) elements *= std::uint64_t(d);
        summary.payloadBytes += elements * dtypeSize(t.dtype);
    }
    metadata["payload_bytes"] = std::to_string(summary.payloadBytes);
    Int8Matrix quantized;  // made for a matrix's scales, written with the matrix that follows them
    writeSafetensors(
        outFile, tensors,
        [&](std::size_t t) {
            const auto [i, isScales] = sources[t];
            const MatrixSpec& spec = specs[i];
            const int width = (spec.cols + 3) / 4 * 4;
            if (isScales) {
                const std::vector<float> matrix =
                    packMatrix(config, spec, checkpoint.read(spec.name, spec.sourceShape));
                quantized = quantizeInt8(matrix, spec.rows, spec.cols, outputChannelsAreRows(spec));
                return quantized.scales;
            }
            if (tensors[t].dtype == DType::I8)
                return std::vector<float>(quantized.values.begin(), quantized.values.end());
            const std::vector<float> matrix = packMatrix(config, spec, checkpoint.read(spec.name, spec.sourceShape));
            std::vector<float> padded(std::size_t(spec.rows) * std::size_t(width), 0.0f);
            for (std::int64_t r = 0; r < spec.rows; ++r)
                std::copy(matrix.begin() + r * spec.cols, matrix.begin() + (r + 1) * spec.cols,
                          padded.begin() + r * width);
            return padded;
        },
        metadata);
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
    const PackedMetadata meta = parsePackedMetadata(header);  // also refuses I8 in a version 1 file
    PackSummary summary;
    summary.config = meta.config;
    std::uint64_t offset = 0;
    auto expectNext = [&](const std::string& name, DType dtype, const std::vector<std::int64_t>& shape) {
        const TensorInfo& info = header.tensor(name);
        if (info.dtype != dtype || info.shape != shape)
            fail(file, ": tensor ", name, " is ", dtypeName(info.dtype), " ", shapeText(info.shape), ", expected ",
                 dtypeName(dtype), " ", shapeText(shape));
        if (info.begin != offset)
            fail(file, ": tensor ", name, " is not where the payload continues (byte ", info.begin, ", expected ",
                 offset, ")");
        offset = info.end;
        ++summary.tensors;
    };
    for (const MatrixSpec& spec : engineMatrices(meta.config)) {
        const DType dtype = header.tensor(spec.name).dtype;
        if (spec.rows == 1 || dtype == DType::BF16) {
            expectNext(spec.name, DType::F32, packedShape(spec, DType::F32));
            continue;
        }
        if (dtype == DType::I8) expectNext(scalesTensorName(spec.name), DType::F32, {int8Channels(spec)});
        expectNext(spec.name, dtype, packedShape(spec, dtype));
    }
    if (summary.tensors != int(header.tensors.size()))
        fail(file, ": holds tensors that are not engine matrices of its config");
    if (offset != meta.payloadBytes)
        fail(file, ": tensors cover ", offset, " bytes, metadata says ", meta.payloadBytes);
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
