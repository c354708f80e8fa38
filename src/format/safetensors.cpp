#include "format/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/half.h"

namespace gpt2 {
namespace {

// Headers beyond this are not safetensors files we can trust (the format's own reader caps at 100 MB).
constexpr std::uint64_t kMaxHeaderBytes = 100u * 1024u * 1024u;

DType parseDType(const std::string& text, const std::string& label, const std::string& name) {
    if (text == "F32") return DType::F32;
    if (text == "F16") return DType::F16;
    if (text == "BF16") return DType::BF16;
    if (text == "I8") return DType::I8;
    fail(label, ": tensor ", name, " has dtype ", text, "; supported dtypes are F32, F16, BF16 and I8");
}

std::uint64_t readU64LE(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

}  // namespace

std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::size_t dtypeSize(DType dtype) {
    switch (dtype) {
        case DType::F32: return 4;
        case DType::F16:
        case DType::BF16: return 2;
        case DType::I8: return 1;
    }
    return 0;
}

const char* dtypeName(DType dtype) {
    switch (dtype) {
        case DType::F32: return "F32";
        case DType::F16: return "F16";
        case DType::BF16: return "BF16";
        case DType::I8: return "I8";
    }
    return "?";
}

std::int64_t TensorInfo::elementCount() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

const TensorInfo* SafetensorsHeader::find(const std::string& name) const {
    auto it = tensors.find(name);
    return it == tensors.end() ? nullptr : &it->second;
}

const TensorInfo& SafetensorsHeader::tensor(const std::string& name) const {
    if (const TensorInfo* info = find(name)) return *info;
    fail(label, ": tensor ", name, " is missing; is this a GPT-2 checkpoint?");
}

std::uint64_t safetensorsHeaderBytes(const std::uint8_t* prefix, std::size_t prefixSize, std::uint64_t fileSize,
                                     const std::string& label) {
    if (fileSize < 8 || prefixSize < 8)
        fail(label, ": file is ", fileSize, " bytes, too short for a safetensors header (truncated download?)");
    const std::uint64_t headerLength = readU64LE(prefix);
    if (headerLength > kMaxHeaderBytes)
        fail(label, ": header length ", headerLength, " is implausible (over 100 MB); not a safetensors file");
    if (headerLength > fileSize - 8)
        fail(label, ": header length ", headerLength, " runs past the end of the ", fileSize,
             "-byte file (truncated download?)");
    return 8 + headerLength;
}

SafetensorsHeader parseSafetensorsHeader(const std::uint8_t* bytes, std::size_t size, std::uint64_t fileSize,
                                         const std::string& label) {
    const std::uint64_t headerEnd = safetensorsHeaderBytes(bytes, size, fileSize, label);
    if (size < headerEnd) fail(label, ": need ", headerEnd, " header bytes, got ", size);

    nlohmann::json json;
    try {
        json = nlohmann::json::parse(bytes + 8, bytes + headerEnd);
    } catch (const nlohmann::json::exception& e) {
        fail(label, ": header is not valid JSON (", e.what(), ")");
    }
    if (!json.is_object()) fail(label, ": header must be a JSON object");

    SafetensorsHeader header;
    header.label = label;
    header.dataOffset = headerEnd;
    const std::uint64_t dataSize = fileSize - headerEnd;

    for (auto& [name, entry] : json.items()) {
        if (name == "__metadata__") {
            if (!entry.is_object()) fail(label, ": __metadata__ must be an object of strings");
            for (auto& [key, value] : entry.items()) {
                if (!value.is_string()) fail(label, ": __metadata__ value for ", key, " must be a string");
                header.metadata[key] = value.get<std::string>();
            }
            continue;
        }
        if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
            !entry.contains("data_offsets") || !entry["dtype"].is_string() || !entry["shape"].is_array() ||
            !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2)
            fail(label, ": tensor ", name, " needs dtype, shape and two data_offsets");
        TensorInfo info;
        info.name = name;
        info.dtype = parseDType(entry["dtype"].get<std::string>(), label, name);
        std::uint64_t elements = 1;
        for (auto& d : entry["shape"]) {
            if (!d.is_number_unsigned()) fail(label, ": tensor ", name, " has a negative or non-integer dimension");
            const std::uint64_t dim = d.get<std::uint64_t>();
            // Each dimension too, not only the product: after a 0, any dimension would pass, and one over
            // INT64_MAX would turn negative in TensorInfo::shape.
            if (dim > std::numeric_limits<std::uint32_t>::max() ||
                (dim != 0 && elements > std::numeric_limits<std::uint32_t>::max() / dim))
                fail(label, ": tensor ", name, " has an implausibly large shape");
            elements *= dim;
            info.shape.push_back(static_cast<std::int64_t>(dim));
        }
        for (auto& o : entry["data_offsets"])
            if (!o.is_number_unsigned()) fail(label, ": tensor ", name, " has a negative or non-integer offset");
        info.begin = entry["data_offsets"][0].get<std::uint64_t>();
        info.end = entry["data_offsets"][1].get<std::uint64_t>();
        if (info.begin > info.end || info.end > dataSize)
            fail(label, ": tensor ", name, " spans bytes [", info.begin, ", ", info.end, ") but the data section has ",
                 dataSize, " bytes (truncated file?)");
        if (info.end - info.begin != elements * dtypeSize(info.dtype))
            fail(label, ": tensor ", name, " of shape ", shapeText(info.shape), " and dtype ", dtypeName(info.dtype),
                 " needs ", elements * dtypeSize(info.dtype), " bytes, its offsets give ", info.end - info.begin);
        header.tensors.emplace(name, std::move(info));
    }

    std::vector<const TensorInfo*> byOffset;
    for (auto& [name, info] : header.tensors) byOffset.push_back(&info);
    std::sort(byOffset.begin(), byOffset.end(), [](auto* a, auto* b) { return a->begin < b->begin; });
    for (std::size_t i = 1; i < byOffset.size(); ++i)
        if (byOffset[i]->begin < byOffset[i - 1]->end && byOffset[i]->begin != byOffset[i]->end)
            fail(label, ": tensors ", byOffset[i - 1]->name, " and ", byOffset[i]->name, " overlap");
    return header;
}

void refuseLoneSafetensors(const SafetensorsHeader& header) {
    const auto format = header.metadata.find("format");
    if (format != header.metadata.end() && format->second == "gpt2-webgl-packed")
        fail(header.label,
             ": a packed model file, a format this engine no longer reads; make a GGUF file from the checkpoint "
             "folder it was packed from: gpt2-gguf DIR model.gguf --type F16 (or F32, Q8_0 for int8, Q4_0, "
             "Q4_K_M), or load that folder");
    fail(header.label,
         ": a safetensors file is a model only with its checkpoint folder (config.json, vocab.json and merges.txt "
         "beside model.safetensors): load the folder, or a GGUF file");
}

void requireFloatTensor(const TensorInfo& info, const std::string& label) {
    if (info.dtype == DType::I8) refuseIntegerTensor(label, info.name);
}

void refuseIntegerTensor(const std::string& label, const std::string& name) {
    fail(label, ": tensor ", name,
         " is I8; checkpoint tensors must be F32, F16 or BF16 (for int8 weights, load with weights 'int8', or a GGUF "
         "Q8_0 file)");
}

void convertToFloat(DType dtype, const std::uint8_t* bytes, std::size_t count, float* out) {
    switch (dtype) {
        case DType::F32:
            // A 0-element tensor's buffers may be null (an empty vector's data()): memcpy must not see those.
            if (count != 0) std::memcpy(out, bytes, count * 4);
            return;
        case DType::F16: halvesToFloats(bytes, count, out); return;
        case DType::BF16:
            for (std::size_t i = 0; i < count; ++i)
                out[i] = bf16ToFloat(std::uint16_t(bytes[2 * i] | bytes[2 * i + 1] << 8));
            return;
        case DType::I8:
            for (std::size_t i = 0; i < count; ++i) out[i] = float(std::int8_t(bytes[i]));
            return;
    }
}

SafetensorsFile::SafetensorsFile(const std::string& path)
    : path_(path), stream_(path, std::ios::binary | std::ios::ate) {
    if (!stream_) fail(path, ": cannot open");
    fileSize_ = static_cast<std::uint64_t>(stream_.tellg());
    std::vector<std::uint8_t> prefix(std::min<std::uint64_t>(fileSize_, 8));
    stream_.seekg(0);
    stream_.read(reinterpret_cast<char*>(prefix.data()), static_cast<std::streamsize>(prefix.size()));
    const std::uint64_t headerEnd = safetensorsHeaderBytes(prefix.data(), prefix.size(), fileSize_, path);
    std::vector<std::uint8_t> bytes(headerEnd);
    stream_.seekg(0);
    if (!stream_.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(headerEnd)))
        fail(path, ": cannot read the ", headerEnd, "-byte header");
    header_ = parseSafetensorsHeader(bytes.data(), bytes.size(), fileSize_, path);
}

std::vector<std::uint8_t> SafetensorsFile::readRaw(const TensorInfo& info) const {
    std::vector<std::uint8_t> bytes(info.end - info.begin);
    stream_.clear();
    stream_.seekg(static_cast<std::streamoff>(header_.dataOffset + info.begin));
    if (!stream_.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
        fail(path_, ": reading tensor ", info.name, " failed (file changed or truncated?)");
    return bytes;
}

std::vector<float> SafetensorsFile::readFloats(const TensorInfo& info) const {
    const auto bytes = readRaw(info);
    std::vector<float> out(static_cast<std::size_t>(info.elementCount()));
    convertToFloat(info.dtype, bytes.data(), out.size(), out.data());
    return out;
}

}  // namespace gpt2
