#include "format/gguf.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string_view>

#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF", little-endian
constexpr std::uint32_t kDefaultAlignment = 32;
constexpr std::uint32_t kMaxDims = 4;  // GGML_MAX_DIMS
constexpr std::uint64_t kMaxKeyBytes = 65535;

enum ValueType : std::uint32_t { U8 = 0, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64, kValueTypes };
constexpr std::uint64_t kScalarBytes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

// The prefix ended inside the header: the caller may have more of the file.
struct Truncated {};

class Cursor {
public:
    Cursor(const std::uint8_t* bytes, std::size_t size, std::uint64_t fileSize, const std::string& label)
        : bytes_(bytes), size_(size), fileSize_(fileSize), label_(label) {}

    std::uint64_t position() const { return pos_; }
    // Throws unless `count` items of at least `each` bytes can still fit in the file: a count that lies
    // fails here, before anything is allocated for it.
    void requireRoom(std::uint64_t count, std::uint64_t each, const char* what) const {
        if (each > 0 && count > (fileSize_ - std::min(pos_, fileSize_)) / each)
            fail(label_, ": ", what, " says ", count, " at byte ", pos_, ", more than the ", fileSize_ - pos_,
                 " bytes left in the file can hold; the file is truncated or corrupt");
    }
    const std::uint8_t* take(std::uint64_t n, const char* what) {
        requireRoom(n, 1, what);
        if (n > size_ - pos_) throw Truncated{};
        const std::uint8_t* p = bytes_ + pos_;
        pos_ += n;
        return p;
    }
    template <typename T>
    T read(const char* what) {
        T value;
        std::memcpy(&value, take(sizeof(T), what), sizeof(T));
        return value;
    }
    std::string string(const char* what, std::uint64_t maxBytes = ~std::uint64_t(0)) {
        const auto length = read<std::uint64_t>(what);
        if (length > maxBytes)
            fail(label_, ": ", what, " at byte ", pos_ - 8, " is ", length, " bytes long, over ", maxBytes);
        const std::uint8_t* p = take(length, what);
        return std::string(reinterpret_cast<const char*>(p), std::size_t(length));
    }

private:
    const std::uint8_t* bytes_;
    std::size_t size_;
    std::uint64_t fileSize_;
    std::uint64_t pos_ = 0;
    const std::string& label_;
};

double scalar(Cursor& in, std::uint32_t type, std::int64_t& integer, const char* what) {
    switch (type) {
        case U8: return double(integer = in.read<std::uint8_t>(what));
        case I8: return double(integer = in.read<std::int8_t>(what));
        case U16: return double(integer = in.read<std::uint16_t>(what));
        case I16: return double(integer = in.read<std::int16_t>(what));
        case U32: return double(integer = in.read<std::uint32_t>(what));
        case I32: return double(integer = in.read<std::int32_t>(what));
        case U64: {
            const auto v = in.read<std::uint64_t>(what);
            integer = v > std::uint64_t(INT64_MAX) ? INT64_MAX : std::int64_t(v);
            return double(v);
        }
        case I64: return double(integer = in.read<std::int64_t>(what));
        case F32: return in.read<float>(what);
        case F64: return in.read<double>(what);
        case BOOL: return double(integer = in.read<std::uint8_t>(what) != 0);
        default: return 0;
    }
}

GgufValue::Kind kindOf(std::uint32_t type) {
    if (type == STRING) return GgufValue::Kind::String;
    if (type == ARRAY) return GgufValue::Kind::Array;
    if (type == BOOL) return GgufValue::Kind::Bool;
    if (type == F32 || type == F64) return GgufValue::Kind::Float;
    return GgufValue::Kind::Integer;
}

void readValue(Cursor& in, std::uint32_t type, GgufValue& out, const std::string& key, const std::string& label,
               int depth) {
    if (type >= kValueTypes) fail(label, ": metadata ", key, " has value type ", type, ", which GGUF does not define");
    out.type = type;
    out.kind = kindOf(type);
    if (type == STRING) {
        out.text = in.string("a metadata string's length");
        return;
    }
    if (type != ARRAY) {
        // A float keeps integer at 0: integer() refuses it rather than converting what may not fit.
        out.number = scalar(in, type, out.integer, "a metadata value");
        return;
    }
    const auto elementType = in.read<std::uint32_t>("an array's element type");
    if (elementType >= kValueTypes)
        fail(label, ": metadata ", key, " is an array of value type ", elementType, ", which GGUF does not define");
    const auto count = in.read<std::uint64_t>("an array's length");
    // Each element takes at least its scalar size, or the 8 bytes of a string's or array's length.
    in.requireRoom(count, std::max<std::uint64_t>(kScalarBytes[elementType], 8 * (kScalarBytes[elementType] == 0)),
                   ("metadata " + key + "'s array length").c_str());
    out.arrayCount = count;
    if (elementType == STRING)
        out.strings.reserve(std::size_t(count));
    else if (elementType != ARRAY)
        out.numbers.reserve(std::size_t(count));
    for (std::uint64_t i = 0; i < count; ++i) {
        if (elementType == STRING) {
            out.strings.push_back(in.string("a metadata string's length"));
        } else if (elementType == ARRAY) {
            if (depth >= 2) fail(label, ": metadata ", key, " nests arrays deeper than GGUF files do");
            GgufValue inner;
            readValue(in, ARRAY, inner, key, label, depth + 1);
        } else {
            std::int64_t unused = 0;
            out.numbers.push_back(scalar(in, elementType, unused, "an array element"));
        }
    }
}

const char* kindName(const GgufValue& v) {
    switch (v.kind) {
        case GgufValue::Kind::Integer: return "an integer";
        case GgufValue::Kind::Float: return "a number";
        case GgufValue::Kind::Bool: return "a bool";
        case GgufValue::Kind::String: return "a string";
        case GgufValue::Kind::Array: return "an array";
    }
    return "?";
}

GgufHeader parse(const std::uint8_t* bytes, std::size_t size, std::uint64_t fileSize, const std::string& label) {
    if (fileSize < 24)
        fail(label, ": the file is ", fileSize, " bytes, too short for a GGUF header (truncated download?)");
    Cursor in(bytes, size, fileSize, label);
    GgufHeader header;
    header.label = label;
    if (in.read<std::uint32_t>("the magic") != kMagic)
        fail(label, ": not a GGUF file (it does not start with \"GGUF\")");
    header.version = in.read<std::uint32_t>("the version");
    if (header.version == 1)
        fail(label,
             ": GGUF version 1 is not supported (it predates 64-bit counts); convert the model again with a current "
             "llama.cpp");
    if (header.version == 0x03000000 || header.version == 0x02000000)
        fail(label, ": a big-endian GGUF file; convert it again for little-endian machines");
    if (header.version > 3)
        fail(label, ": GGUF version ", header.version, " is newer than this engine reads (2 and 3)");
    const auto tensorCount = in.read<std::uint64_t>("the tensor count");
    const auto kvCount = in.read<std::uint64_t>("the metadata count");
    // A key/value pair takes at least 8 + 1 + 4 + 1 bytes, a tensor description 8 + 1 + 4 + 8 + 4 + 8.
    in.requireRoom(kvCount, 14, "the metadata count");
    in.requireRoom(tensorCount, 33, "the tensor count");
    for (std::uint64_t i = 0; i < kvCount; ++i) {
        std::string key = in.string("a metadata key's length", kMaxKeyBytes);
        const auto type = in.read<std::uint32_t>("a metadata value type");
        GgufValue value;
        readValue(in, type, value, key, label, 0);
        if (!header.metadata.emplace(key, std::move(value)).second)
            fail(label, ": metadata key ", key, " appears twice; the file is corrupt");
    }
    std::uint64_t alignment = kDefaultAlignment;
    if (const GgufValue* a = header.find("general.alignment")) {
        if (a->kind != GgufValue::Kind::Integer || a->integer <= 0 || (a->integer & (a->integer - 1)) != 0)
            fail(label, ": general.alignment must be a power of two, got ", a->integer);
        alignment = std::uint64_t(a->integer);
    }
    header.tensors.resize(std::size_t(tensorCount));
    for (GgufTensor& t : header.tensors) {
        t.name = in.string("a tensor name's length", kMaxKeyBytes);
        const auto dimCount = in.read<std::uint32_t>("a tensor's dimension count");
        if (dimCount == 0 || dimCount > kMaxDims)
            fail(label, ": tensor ", t.name, " has ", dimCount, " dimensions; GGUF tensors have 1 to ", kMaxDims);
        std::uint64_t elements = 1;
        for (std::uint32_t d = 0; d < dimCount; ++d) {
            const auto dim = in.read<std::uint64_t>("a tensor dimension");
            if (dim == 0 || dim > (std::uint64_t(1) << 40) || elements > (std::uint64_t(1) << 50) / dim)
                fail(label, ": tensor ", t.name, " has dimension ", dim, "; the file is corrupt");
            elements *= dim;
            t.dims.push_back(std::int64_t(dim));
        }
        const auto type = in.read<std::uint32_t>("a tensor type");
        const GgmlTypeInfo* info = ggmlTypeInfo(type);
        if (!info)
            fail(label, ": tensor ", t.name, " has type ", ggmlTypeName(type), ", which this engine does not read; ",
                 "supported types are ", supportedGgmlTypes(), " (quantize the model again with one of them)");
        t.type = info->type;
        if (t.dims[0] % info->blockValues != 0)
            fail(label, ": tensor ", t.name, " has rows of ", t.dims[0], " values, not whole ", info->name,
                 " blocks of ", info->blockValues);
        t.begin = in.read<std::uint64_t>("a tensor offset");
        if (t.begin > fileSize)
            fail(label, ": tensor ", t.name, " starts at data offset ", t.begin, ", past the end of the ", fileSize,
                 "-byte file; the file is corrupt");
        if (t.begin % alignment != 0)
            fail(label, ": tensor ", t.name, " starts at data offset ", t.begin, ", not a multiple of the alignment ",
                 alignment);
        t.end = t.begin + elements / std::uint64_t(info->blockValues) * std::uint64_t(info->blockBytes);
    }
    header.dataOffset = (in.position() + alignment - 1) / alignment * alignment;
    // Writers pad the header to the alignment even where no tensor follows: a file that ends before
    // its data section is cut short.
    if (header.dataOffset > fileSize)
        fail(label, ": the data section starts at byte ", header.dataOffset, ", past the end of the ", fileSize,
             "-byte file (truncated download?)");
    std::sort(header.tensors.begin(), header.tensors.end(), [](auto& a, auto& b) { return a.begin < b.begin; });
    std::uint64_t previousEnd = 0;
    const GgufTensor* previous = nullptr;
    for (const GgufTensor& t : header.tensors) {
        if (previous && t.begin < previousEnd)
            fail(label, ": tensors ", previous->name, " and ", t.name, " overlap; the file is corrupt");
        if (t.end > fileSize - std::min(fileSize, header.dataOffset))
            fail(label, ": tensor ", t.name, " (", ggmlTypeName(std::uint32_t(t.type)), ", ", t.end - t.begin,
                 " bytes) ends at byte ", header.dataOffset + t.end, ", past the end of the ", fileSize,
                 "-byte file (truncated download?)");
        previousEnd = t.end;
        previous = &t;
    }
    // A set, not a pairwise check: a hostile header may describe millions of tensors.
    std::set<std::string_view> names;
    for (const GgufTensor& t : header.tensors)
        if (!names.insert(t.name).second) fail(label, ": tensor ", t.name, " appears twice; the file is corrupt");
    return header;
}

}  // namespace

std::int64_t GgufTensor::elementCount() const {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    return n;
}

const GgufValue* GgufHeader::find(const std::string& key) const {
    auto it = metadata.find(key);
    return it == metadata.end() ? nullptr : &it->second;
}

const GgufTensor* GgufHeader::tensor(const std::string& name) const {
    for (const GgufTensor& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

namespace {
const GgufValue& required(const GgufHeader& h, const std::string& key, GgufValue::Kind kind) {
    const GgufValue* v = h.find(key);
    if (!v) fail(h.label, ": metadata ", key, " is missing; is this a GPT-2 GGUF file from llama.cpp's converter?");
    const bool numeric = kind != GgufValue::Kind::String && kind != GgufValue::Kind::Array;
    const bool isNumber = v->kind == GgufValue::Kind::Integer || v->kind == GgufValue::Kind::Float;
    if (numeric ? !isNumber : v->kind != kind)
        fail(h.label, ": metadata ", key, " is ", kindName(*v), ", expected ",
             numeric                           ? "a number"
             : kind == GgufValue::Kind::String ? "a string"
                                               : "an array");
    return *v;
}
}  // namespace

std::int64_t GgufHeader::integer(const std::string& key) const {
    const GgufValue& v = required(*this, key, GgufValue::Kind::Integer);
    if (v.kind != GgufValue::Kind::Integer) fail(label, ": metadata ", key, " is ", v.number, ", expected an integer");
    return v.integer;
}

double GgufHeader::number(const std::string& key) const { return required(*this, key, GgufValue::Kind::Float).number; }

const std::string& GgufHeader::text(const std::string& key) const {
    return required(*this, key, GgufValue::Kind::String).text;
}

const std::vector<std::string>& GgufHeader::strings(const std::string& key) const {
    const GgufValue& v = required(*this, key, GgufValue::Kind::Array);
    if (v.strings.size() != v.arrayCount) fail(label, ": metadata ", key, " is not an array of strings");
    return v.strings;
}

bool isGguf(const std::uint8_t* prefix, std::size_t size) {
    return size >= 4 && prefix[0] == 'G' && prefix[1] == 'G' && prefix[2] == 'U' && prefix[3] == 'F';
}

std::optional<GgufHeader> parseGgufHeader(const std::uint8_t* bytes, std::size_t size, std::uint64_t fileSize,
                                          const std::string& label) {
    if (size > fileSize) fail(label, ": ", size, " header bytes given for a ", fileSize, "-byte file");
    try {
        return parse(bytes, size, fileSize, label);
    } catch (const Truncated&) {
        if (size < fileSize) return std::nullopt;
        fail(label, ": the file ends inside its GGUF header, after ", fileSize, " bytes (truncated download?)");
    }
}

GgufFile::GgufFile(const std::string& path)
    : stream_(path, std::ios::binary),
      header_(readHeader(stream_, path, [&](const std::uint8_t* bytes, std::size_t size, std::uint64_t fileSize) {
          return parseGgufHeader(bytes, size, fileSize, path);
      })) {}

std::vector<std::uint8_t> GgufFile::read(const GgufTensor& tensor) const {
    std::vector<std::uint8_t> bytes(std::size_t(tensor.end - tensor.begin));
    stream_.seekg(std::streamoff(header_.dataOffset + tensor.begin));
    stream_.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()));
    if (!stream_) fail(header_.label, ": could not read tensor ", tensor.name);
    return bytes;
}

}  // namespace gpt2
