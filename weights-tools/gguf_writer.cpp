#include "weights-tools/gguf_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "format/checkpoint.h"
#include "format/ggml_type.h"
#include "format/gguf_gpt2.h"
#include "model/weight_packing.h"
#include "util/error.h"
#include "util/file.h"
#include "util/half.h"

namespace gpt2 {
namespace {

constexpr std::uint64_t kAlignment = 32;  // GGUF's default (general.alignment unset)

// The GGUF value types this writer uses.
enum : std::uint32_t { U32 = 4, I32 = 5, F32 = 6, STRING = 8, ARRAY = 9 };

class Bytes {
public:
    template <typename T>
    void put(T value) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
        data.insert(data.end(), p, p + sizeof(T));
    }
    void string(const std::string& s) {
        put<std::uint64_t>(s.size());
        data.insert(data.end(), s.begin(), s.end());
    }
    std::vector<std::uint8_t> data;
};

// One metadata entry at a time: key, value type, value.
struct Metadata {
    Bytes bytes;
    std::uint64_t count = 0;
    void key(const std::string& k, std::uint32_t type) {
        bytes.string(k);
        bytes.put(type);
        ++count;
    }
    void u32(const std::string& k, std::uint32_t v) { key(k, U32), bytes.put(v); }
    void f32(const std::string& k, float v) { key(k, F32), bytes.put(v); }
    void text(const std::string& k, const std::string& v) { key(k, STRING), bytes.string(v); }
    void strings(const std::string& k, const std::vector<std::string>& v) {
        key(k, ARRAY), bytes.put(STRING), bytes.put<std::uint64_t>(v.size());
        for (const auto& s : v) bytes.string(s);
    }
    void i32s(const std::string& k, const std::vector<std::int32_t>& v) {
        key(k, ARRAY), bytes.put(I32), bytes.put<std::uint64_t>(v.size());
        for (auto x : v) bytes.put(x);
    }
};

void putHalf(std::vector<std::uint8_t>& out, float value) {
    const std::uint16_t h = floatToHalf(value);
    out.push_back(std::uint8_t(h & 0xFF));
    out.push_back(std::uint8_t(h >> 8));
}

// One row of K values (K a multiple of 32) as Q8_0 or Q4_0 blocks.
void quantizeRow(GgmlType type, const float* x, std::int64_t K, std::vector<std::uint8_t>& out) {
    for (std::int64_t b = 0; b < K; b += 32) {
        const float* v = x + b;
        if (type == GgmlType::Q8_0) {
            float amax = 0;
            for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(v[i]));
            const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
            putHalf(out, d);
            for (int i = 0; i < 32; ++i) out.push_back(std::uint8_t(std::int8_t(std::lround(v[i] * id))));
            continue;
        }
        // Q4_0: the value of largest magnitude maps to code 0, so the codes span [-8, 7] * d.
        float max = 0, amax = 0;
        for (int i = 0; i < 32; ++i)
            if (std::fabs(v[i]) > amax) amax = std::fabs(v[i]), max = v[i];
        const float d = max / -8.0f, id = d != 0 ? 1.0f / d : 0.0f;
        putHalf(out, d);
        auto code = [&](float value) { return std::uint8_t(std::min(15, int(std::int8_t(value * id + 8.5f)))); };
        for (int i = 0; i < 16; ++i) out.push_back(std::uint8_t(code(v[i]) | code(v[i + 16]) << 4));
    }
}

std::vector<std::uint8_t> encode(GgmlType type, const std::vector<float>& values, std::int64_t K) {
    std::vector<std::uint8_t> out;
    if (type == GgmlType::F32) {
        out.resize(values.size() * 4);
        std::memcpy(out.data(), values.data(), out.size());
    } else if (type == GgmlType::F16) {
        for (float v : values) putHalf(out, v);
    } else {
        for (std::size_t r = 0; r < values.size(); r += std::size_t(K)) quantizeRow(type, values.data() + r, K, out);
    }
    return out;
}

GgmlType tensorType(GgufFileType file, const MatrixSpec& spec) {
    if (spec.rows == 1) return GgmlType::F32;
    switch (file) {
        case GgufFileType::F32: return GgmlType::F32;
        case GgufFileType::F16: return spec.name == "wpe.weight" ? GgmlType::F32 : GgmlType::F16;
        case GgufFileType::Q8_0: return spec.name == "wpe.weight" ? GgmlType::F32 : GgmlType::Q8_0;
        case GgufFileType::Q4_0:
            if (spec.name == "wpe.weight") return GgmlType::F32;
            return outputChannelsAreRows(spec) ? GgmlType::Q8_0 : GgmlType::Q4_0;
    }
    return GgmlType::F32;
}

// llama.cpp's file type numbers (general.file_type).
std::uint32_t fileTypeNumber(GgufFileType type) {
    switch (type) {
        case GgufFileType::F32: return 0;
        case GgufFileType::F16: return 1;
        case GgufFileType::Q4_0: return 2;
        case GgufFileType::Q8_0: return 7;
    }
    return 0;
}

// The tokenizer as GGUF holds it: token strings in id order, merges in rank order.
void tokenizerMetadata(Metadata& m, const std::string& inDir) {
    const std::string vocabPath = joinPath(inDir, "vocab.json"), mergesPath = joinPath(inDir, "merges.txt");
    if (!fileExists(vocabPath) || !fileExists(mergesPath))
        fail(inDir, ": a GGUF file carries its tokenizer; vocab.json and merges.txt are needed");
    const nlohmann::json vocab = nlohmann::json::parse(readTextFile(vocabPath));
    std::vector<std::string> tokens(vocab.size());
    for (const auto& [text, id] : vocab.items()) {
        const auto i = id.get<std::int64_t>();
        if (i < 0 || i >= std::int64_t(tokens.size())) fail(vocabPath, ": token ", text, " has id ", i);
        tokens[std::size_t(i)] = text;
    }
    std::vector<std::string> merges;
    const std::string mergesText = readTextFile(mergesPath);
    for (std::size_t start = 0; start < mergesText.size();) {
        std::size_t end = mergesText.find('\n', start);
        if (end == std::string::npos) end = mergesText.size();
        std::string line = mergesText.substr(start, end - start);
        start = end + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty() && line.rfind("#version", 0) != 0) merges.push_back(line);
    }
    const auto eot = std::find(tokens.begin(), tokens.end(), "<|endoftext|>");
    if (eot == tokens.end()) fail(vocabPath, ": has no <|endoftext|> token");
    const auto eotId = std::uint32_t(eot - tokens.begin());
    std::vector<std::int32_t> types(tokens.size(), 1);  // normal
    types[eotId] = 3;                                   // control
    m.text("tokenizer.ggml.model", "gpt2");
    m.text("tokenizer.ggml.pre", "gpt-2");
    m.strings("tokenizer.ggml.tokens", tokens);
    m.i32s("tokenizer.ggml.token_type", types);
    m.strings("tokenizer.ggml.merges", merges);
    m.u32("tokenizer.ggml.bos_token_id", eotId);
    m.u32("tokenizer.ggml.eos_token_id", eotId);
    m.u32("tokenizer.ggml.unknown_token_id", eotId);
}

std::uint64_t aligned(std::uint64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

GgufFileType parseGgufFileType(const std::string& name) {
    if (name == "F32") return GgufFileType::F32;
    if (name == "F16") return GgufFileType::F16;
    if (name == "Q8_0") return GgufFileType::Q8_0;
    if (name == "Q4_0") return GgufFileType::Q4_0;
    fail("--type must be F32, F16, Q8_0 or Q4_0, got \"", name, "\"");
}

GgufWriteSummary writeGguf(const std::string& inDir, const std::string& outFile, GgufFileType type) {
    const HuggingFaceCheckpoint checkpoint(inDir);
    const ModelConfig& c = checkpoint.config();
    if (!c.scaleAttentionWeights || c.scaleAttentionByInverseLayer || c.activation != Activation::GeluTanh)
        fail(inDir,
             ": llama.cpp's GPT-2 has tanh GELU and attention scaled by 1/sqrt(head size) only; this "
             "config differs, and a GGUF file cannot say so");
    Metadata m;
    m.text("general.architecture", "gpt2");
    m.text("general.name", inDir.substr(inDir.find_last_of('/', inDir.size() - 2) + 1));
    m.u32("gpt2.block_count", std::uint32_t(c.layers));
    m.u32("gpt2.context_length", std::uint32_t(c.contextLength));
    m.u32("gpt2.embedding_length", std::uint32_t(c.embedDim));
    m.u32("gpt2.feed_forward_length", std::uint32_t(c.innerDim));
    m.u32("gpt2.attention.head_count", std::uint32_t(c.heads));
    m.f32("gpt2.attention.layer_norm_epsilon", c.layerNormEpsilon);
    m.u32("general.file_type", fileTypeNumber(type));
    if (type == GgufFileType::Q8_0 || type == GgufFileType::Q4_0) m.u32("general.quantization_version", 2);
    tokenizerMetadata(m, inDir);

    // Tensor descriptions first (their offsets follow from the types and shapes), then the data.
    struct Planned {
        MatrixSpec spec;
        GgmlType type;
        std::vector<std::int64_t> dims;  // GGUF order
        std::uint64_t offset, bytes;
    };
    std::vector<Planned> tensors;
    std::uint64_t offset = 0;
    for (const MatrixSpec& spec : engineMatrices(c)) {
        std::vector<std::int64_t> dims = spec.sourceShape;
        if (!storedTransposed(spec.name)) std::reverse(dims.begin(), dims.end());
        const GgmlType t = tensorType(type, spec);
        const GgmlTypeInfo& info = *ggmlTypeInfo(std::uint32_t(t));
        if (dims[0] % info.blockValues != 0)
            fail(spec.name, ": rows of ", dims[0], " values are not whole ", info.name, " blocks of ", info.blockValues,
                 "; choose F16 or F32 for this model");
        std::int64_t count = 1;
        for (auto d : dims) count *= d;
        const std::uint64_t bytes = std::uint64_t(count / info.blockValues * info.blockBytes);
        tensors.push_back({spec, t, dims, offset, bytes});
        offset = aligned(offset + bytes);
    }
    Bytes header;
    header.put<std::uint32_t>(0x46554747);  // "GGUF"
    header.put<std::uint32_t>(3);
    header.put<std::uint64_t>(tensors.size());
    header.put<std::uint64_t>(m.count);
    header.data.insert(header.data.end(), m.bytes.data.begin(), m.bytes.data.end());
    for (const Planned& t : tensors) {
        header.string(ggufName(t.spec.name));
        header.put<std::uint32_t>(std::uint32_t(t.dims.size()));
        for (auto d : t.dims) header.put<std::uint64_t>(std::uint64_t(d));
        header.put<std::uint32_t>(std::uint32_t(t.type));
        header.put<std::uint64_t>(t.offset);
    }
    header.data.resize(std::size_t(aligned(header.data.size())), 0);

    std::ofstream out(outFile, std::ios::binary);
    if (!out) fail(outFile, ": cannot open for writing");
    out.write(reinterpret_cast<const char*>(header.data.data()), std::streamsize(header.data.size()));
    std::uint64_t written = 0;
    for (const Planned& t : tensors) {
        std::vector<float> values = checkpoint.read(t.spec.name, t.spec.sourceShape);
        if (storedTransposed(t.spec.name)) {  // Hugging Face's [in, out] -> [out, in]
            const std::int64_t in = t.spec.sourceShape[0], outputs = t.spec.sourceShape[1];
            std::vector<float> transposed(values.size());
            for (std::int64_t i = 0; i < in; ++i)
                for (std::int64_t o = 0; o < outputs; ++o)
                    transposed[std::size_t(o * in + i)] = values[std::size_t(i * outputs + o)];
            values = std::move(transposed);
        }
        const std::vector<std::uint8_t> bytes = encode(t.type, values, t.dims[0]);
        out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
        const std::vector<char> padding(std::size_t(aligned(bytes.size()) - bytes.size()), 0);
        out.write(padding.data(), std::streamsize(padding.size()));
        written += bytes.size() + padding.size();
    }
    if (!out) fail(outFile, ": writing failed (disk full?)");
    return {c, int(tensors.size()), header.data.size() + written};
}

}  // namespace gpt2
