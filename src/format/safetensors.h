#pragma once
// Reader for the safetensors container (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length, a JSON header, then the tensor bytes. Every length, offset, dtype and
// shape is checked when the header is parsed, so later reads cannot go out of bounds.
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gpt2 {

// Checkpoints hold floats; I8 is read only to be refused by name.
enum class DType { F32, F16, BF16, I8 };

std::size_t dtypeSize(DType dtype);
// "[768, 2304]": shapes as error messages print them.
std::string shapeText(const std::vector<std::int64_t>& shape);
const char* dtypeName(DType dtype);

struct TensorInfo {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::int64_t> shape;
    std::uint64_t begin = 0;  // byte offsets relative to the start of the data section
    std::uint64_t end = 0;
    std::int64_t elementCount() const;
};

// The parsed header. `label` names the file in every error message.
struct SafetensorsHeader {
    std::string label;
    std::uint64_t dataOffset = 0;  // absolute offset of the data section in the file
    std::map<std::string, TensorInfo> tensors;
    std::map<std::string, std::string> metadata;

    const TensorInfo& tensor(const std::string& name) const;  // throws naming the file and tensor
    const TensorInfo* find(const std::string& name) const;
};

// `prefix` holds at least the first 8 bytes of the file, ideally the whole header; returns how many
// bytes the header needs (8 + its length) when `prefix` is too short, so a streaming caller can
// fetch more. `fileSize` is the full size of the file.
std::uint64_t safetensorsHeaderBytes(const std::uint8_t* prefix, std::size_t prefixSize, std::uint64_t fileSize,
                                     const std::string& label);
SafetensorsHeader parseSafetensorsHeader(const std::uint8_t* bytes, std::size_t size, std::uint64_t fileSize,
                                         const std::string& label);

// A safetensors file on its own is no model: its config.json is beside it in a checkpoint folder.
// Throws saying so, naming header.label; a file of the project's retired packed format is told how
// to convert its checkpoint to GGUF.
[[noreturn]] void refuseLoneSafetensors(const SafetensorsHeader& header);
// Throws unless a checkpoint tensor holds floats (F32, F16 or BF16), naming `label` and the tensor.
void requireFloatTensor(const TensorInfo& info, const std::string& label);
// Throws that the checkpoint tensor `name` holds integers (I8), naming `label`.
[[noreturn]] void refuseIntegerTensor(const std::string& label, const std::string& name);
// Converts one tensor's raw bytes (F32, F16 or BF16, little-endian) to floats.
void convertToFloat(DType dtype, const std::uint8_t* bytes, std::size_t count, float* out);

// A safetensors file on disk, read tensor by tensor (a 1.5B checkpoint never has to fit in memory).
class SafetensorsFile {
public:
    explicit SafetensorsFile(const std::string& path);
    const SafetensorsHeader& header() const { return header_; }
    std::vector<float> readFloats(const TensorInfo& info) const;
    std::vector<std::uint8_t> readRaw(const TensorInfo& info) const;

private:
    std::string path_;
    std::uint64_t fileSize_ = 0;
    SafetensorsHeader header_;
    mutable std::ifstream stream_;
};

}  // namespace gpt2
