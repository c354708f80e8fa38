#pragma once
// Reader for the GGUF container (ggml's single-file model format, version 2 and 3): a header, a
// table of typed metadata key/value pairs, a table of tensor descriptions, then the aligned tensor
// data. Every count, length, offset and size is checked against the bytes that are there, so a file
// that lies about them fails with a message and is never read out of bounds.
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "format/ggml_type.h"

namespace gpt2 {

// A metadata value: a number, a string, a bool, or an array of one of those (arrays of arrays are
// read past and kept empty: GPT-2 files have none the engine needs).
struct GgufValue {
    enum class Kind { Integer, Float, Bool, String, Array } kind = Kind::Integer;
    std::uint32_t type = 0;  // the GGUF value type, for messages
    std::int64_t integer = 0;
    double number = 0;
    std::string text;
    std::vector<std::string> strings;  // an array of strings
    std::vector<double> numbers;       // an array of numbers or bools
    std::uint64_t arrayCount = 0;
};

struct GgufTensor {
    std::string name;
    GgmlType type = GgmlType::F32;
    std::vector<std::int64_t> dims;  // ggml order: dims[0] is the contiguous one (a row's length)
    std::uint64_t begin = 0;         // byte offsets relative to the start of the data section
    std::uint64_t end = 0;
    std::int64_t elementCount() const;
    std::int64_t rows() const { return dims.empty() ? 0 : elementCount() / dims[0]; }
};

struct GgufHeader {
    std::string label;  // names the file in every error message
    std::uint32_t version = 3;
    std::uint64_t dataOffset = 0;  // absolute offset of the data section
    std::map<std::string, GgufValue> metadata;
    std::vector<GgufTensor> tensors;  // in file order (by offset)

    const GgufValue* find(const std::string& key) const;
    const GgufTensor* tensor(const std::string& name) const;
    // Typed metadata look-ups that throw naming the key, the file and what was found.
    std::int64_t integer(const std::string& key) const;
    double number(const std::string& key) const;
    const std::string& text(const std::string& key) const;
    const std::vector<std::string>& strings(const std::string& key) const;
};

// True when `prefix` starts with GGUF's magic.
bool isGguf(const std::uint8_t* prefix, std::size_t size);

// Parses the header from the file's first `size` bytes. Returns nothing when those end inside the
// header of a longer file (`size` < `fileSize`), so a streaming caller can read more and try again;
// throws on anything malformed, and on a header cut short by the end of the file.
std::optional<GgufHeader> parseGgufHeader(const std::uint8_t* bytes, std::size_t size, std::uint64_t fileSize,
                                          const std::string& label);

// A GGUF file on disk, read tensor by tensor.
class GgufFile {
public:
    explicit GgufFile(const std::string& path);
    const GgufHeader& header() const { return header_; }
    std::vector<std::uint8_t> read(const GgufTensor& tensor) const;

private:
    mutable std::ifstream stream_;  // before header_, which is read from it
    GgufHeader header_;
};

}  // namespace gpt2
