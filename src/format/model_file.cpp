#include "format/model_file.h"

#include <algorithm>

#include "format/checkpoint.h"
#include "format/gguf_gpt2.h"
#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

GgmlType storageType(DType dtype) {
    switch (dtype) {
        case DType::F32: return GgmlType::F32;
        case DType::F16: return GgmlType::F16;
        case DType::BF16: return GgmlType::BF16;
        case DType::I8: return GgmlType::I8;
    }
    return GgmlType::I8;
}

ModelFileHeader fromGguf(const GgufHeader& gguf) {
    ModelFileHeader h;
    h.label = gguf.label;
    h.gguf = true;
    h.shapesFrom = "the gpt2.* metadata";
    h.config = ggufGpt2Config(gguf);
    h.tokens = gguf.strings("tokenizer.ggml.tokens");
    h.merges = gguf.strings("tokenizer.ggml.merges");
    const std::string& tokenizer = gguf.text("tokenizer.ggml.model");
    if (tokenizer != "gpt2")
        fail(gguf.label, ": tokenizer.ggml.model is \"", tokenizer,
             "\"; GPT-2 models use GPT-2's byte-level BPE (\"gpt2\")");
    for (const GgufTensor& t : gguf.tensors) {
        StoredTensor s{huggingFaceName(t.name), t.name, t.dims, t.type, false, gguf.dataOffset + t.begin,
                       gguf.dataOffset + t.end};
        // GGUF lists the contiguous dimension first; a Conv1D weight is stored [out, in], so its
        // Hugging Face [in, out] reads the same as its dimensions.
        s.transposed = storedTransposed(s.name);
        if (!s.transposed) std::reverse(s.shape.begin(), s.shape.end());
        h.tensors.push_back(std::move(s));
    }
    requireEveryTensor(*h.config, {&h});
    return h;
}

ModelFileHeader fromSafetensors(const SafetensorsHeader& st) {
    ModelFileHeader h;
    h.label = st.label;
    h.shapesFrom = "config.json";
    h.metadata = st.metadata;
    const std::string prefix = "transformer.";
    for (const auto& [name, info] : st.tensors)
        h.tensors.push_back({name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name, name, info.shape,
                             storageType(info.dtype), false, st.dataOffset + info.begin, st.dataOffset + info.end});
    std::sort(h.tensors.begin(), h.tensors.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
    return h;
}

}  // namespace

std::string ModelFileHeader::storedNameOf(const std::string& name) const {
    return gguf ? ggufName(name) + " (Hugging Face " + name + ")" : name;
}

std::optional<ModelFileHeader> parseModelFileHeader(const std::uint8_t* bytes, std::size_t size, std::uint64_t fileSize,
                                                    const std::string& label) {
    if (isGguf(bytes, size)) {
        const std::optional<GgufHeader> gguf = parseGgufHeader(bytes, size, fileSize, label);
        if (!gguf) return std::nullopt;
        return fromGguf(*gguf);
    }
    if (size < fileSize && (size < 8 || size < safetensorsHeaderBytes(bytes, size, fileSize, label)))
        return std::nullopt;
    return fromSafetensors(parseSafetensorsHeader(bytes, size, fileSize, label));
}

void requireEveryTensor(const ModelConfig& config, const std::vector<const ModelFileHeader*>& files) {
    for (const std::string& name : gpt2TensorNames(config)) {
        const auto holds = [&](const ModelFileHeader* file) {
            return std::any_of(file->tensors.begin(), file->tensors.end(),
                               [&](const StoredTensor& t) { return t.name == name; });
        };
        if (std::any_of(files.begin(), files.end(), holds)) continue;
        const ModelFileHeader& first = *files.front();
        fail(first.label, ": tensor ", first.storedNameOf(name), " is missing; is this a complete GPT-2 ",
             first.gguf ? "GGUF file?" : "checkpoint for its config.json?");
    }
}

bool isWholeModelFile(const std::uint8_t* prefix, std::size_t size) { return isGguf(prefix, size); }

void requireWholeModel(const ModelFileHeader& header) {
    if (header.config) return;
    SafetensorsHeader refused;
    refused.label = header.label;
    refused.metadata = header.metadata;
    refuseLoneSafetensors(refused);
}

ModelFileReader::ModelFileReader(const std::string& path)
    : stream_(path, std::ios::binary),
      header_(readHeader(stream_, path, [&](const std::uint8_t* bytes, std::size_t size, std::uint64_t fileSize) {
          return parseModelFileHeader(bytes, size, fileSize, path);
      })) {}

std::vector<std::uint8_t> ModelFileReader::read(const StoredTensor& tensor) const {
    std::vector<std::uint8_t> bytes(std::size_t(tensor.end - tensor.begin));
    stream_.clear();
    stream_.seekg(std::streamoff(tensor.begin));
    if (!stream_.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size())))
        fail(header_.label, ": reading tensor ", tensor.storedName, " failed (file changed or truncated?)");
    return bytes;
}

std::vector<const ModelFileHeader*> ModelOnDisk::headers() const {
    std::vector<const ModelFileHeader*> headers;
    for (const auto& file : files) headers.push_back(&file->header());
    return headers;
}

ModelOnDisk openModelOnDisk(const std::string& path) {
    ModelOnDisk model;
    model.oneFile = fileExists(path);
    if (!model.oneFile) model.config = checkpointConfig(path);
    for (const std::string& file : model.oneFile ? std::vector<std::string>{path} : checkpointWeightFiles(path))
        model.files.push_back(std::make_unique<ModelFileReader>(file));
    if (model.oneFile) {
        requireWholeModel(model.files.front()->header());
        model.config = *model.files.front()->header().config;
    }
    requireEveryTensor(model.config, model.headers());
    return model;
}

}  // namespace gpt2
