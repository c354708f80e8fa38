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
#include "model/engine_matrices.h"
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
        // Q4_0 and Q5_0: the value of largest magnitude maps to code 0, so the codes span [-8, 7] * d
        // (Q5_0: [-16, 15] * d); Q5_0 keeps each code's fifth bit in a 32-bit word after d.
        const bool five = type == GgmlType::Q5_0;
        const float half = five ? 16.0f : 8.0f;
        float max = 0, amax = 0;
        for (int i = 0; i < 32; ++i)
            if (std::fabs(v[i]) > amax) amax = std::fabs(v[i]), max = v[i];
        const float d = max / -half, id = d != 0 ? 1.0f / d : 0.0f;
        putHalf(out, d);
        std::uint8_t q[32];
        for (int i = 0; i < 32; ++i)
            q[i] = std::uint8_t(std::min(int(2 * half - 1), int(std::int8_t(v[i] * id + half + 0.5f))));
        if (five) {
            std::uint32_t high = 0;
            for (int i = 0; i < 32; ++i) high |= std::uint32_t(q[i] >> 4) << i;
            for (int b = 0; b < 4; ++b) out.push_back(std::uint8_t(high >> (8 * b)));
        }
        for (int i = 0; i < 16; ++i) out.push_back(std::uint8_t((q[i] & 0xF) | (q[i + 16] & 0xF) << 4));
    }
}

// One super-block of 256 values as Q4_K: eight blocks of 32, each with a 6-bit scale and a 6-bit
// min relative to the super-block's d and dmin (value = d * sc * q - dmin * m, q 0..15).
void quantizeQ4K(const float* x, std::vector<std::uint8_t>& out) {
    float scale[8], min[8];  // per block: value ~ scale * q - min
    for (int j = 0; j < 8; ++j) {
        float lo = x[32 * j], hi = lo;
        for (int i = 0; i < 32; ++i) lo = std::min(lo, x[32 * j + i]), hi = std::max(hi, x[32 * j + i]);
        lo = std::min(lo, 0.0f);  // mins are stored as magnitudes to subtract
        scale[j] = (hi - lo) / 15.0f;
        min[j] = -lo;
    }
    const float d = *std::max_element(scale, scale + 8) / 63.0f, dmin = *std::max_element(min, min + 8) / 63.0f;
    const float dStored = halfToFloat(floatToHalf(d)), dminStored = halfToFloat(floatToHalf(dmin));
    int sc[8], mq[8];
    for (int j = 0; j < 8; ++j) {
        sc[j] = dStored > 0 ? std::clamp(int(std::lround(scale[j] / dStored)), 0, 63) : 0;
        mq[j] = dminStored > 0 ? std::clamp(int(std::lround(min[j] / dminStored)), 0, 63) : 0;
    }
    putHalf(out, d);
    putHalf(out, dmin);
    // 12 bytes: blocks 0-3 in the low 6 bits of bytes 0-3 (scale) and 4-7 (min); blocks 4-7 split
    // into low nibbles in bytes 8-11 and their top 2 bits in the top bits of bytes 0-7.
    std::uint8_t packed[12] = {};
    for (int j = 0; j < 4; ++j) {
        packed[j] = std::uint8_t((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        packed[j + 4] = std::uint8_t((mq[j] & 63) | ((mq[j + 4] >> 4) << 6));
        packed[j + 8] = std::uint8_t((sc[j + 4] & 0xF) | ((mq[j + 4] & 0xF) << 4));
    }
    out.insert(out.end(), packed, packed + 12);
    std::uint8_t q[256];
    for (int j = 0; j < 8; ++j) {
        const float step = dStored * float(sc[j]), offset = dminStored * float(mq[j]);
        for (int i = 0; i < 32; ++i)
            q[32 * j + i] =
                step > 0 ? std::uint8_t(std::clamp(int(std::lround((x[32 * j + i] + offset) / step)), 0, 15)) : 0;
    }
    // Each 32 bytes: block 2c in the low nibbles, block 2c + 1 in the high ones.
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) out.push_back(std::uint8_t(q[64 * c + l] | (q[64 * c + 32 + l] << 4)));
}

// One super-block of 256 values as Q6_K: sixteen blocks of 16, each with a signed 8-bit scale
// relative to the super-block's d (value = d * sc * (q - 32), q 0..63).
void quantizeQ6K(const float* x, std::vector<std::uint8_t>& out) {
    float scale[16];
    for (int s = 0; s < 16; ++s) {
        float max = 0, amax = 0;
        for (int i = 0; i < 16; ++i)
            if (std::fabs(x[16 * s + i]) > amax) amax = std::fabs(x[16 * s + i]), max = x[16 * s + i];
        scale[s] = max / -32.0f;
    }
    float amax = 0;
    for (float v : scale) amax = std::max(amax, std::fabs(v));
    const float d = amax / 127.0f, dStored = halfToFloat(floatToHalf(d));
    std::int8_t sc[16];
    std::uint8_t q[256];
    for (int s = 0; s < 16; ++s) {
        sc[s] = std::int8_t(dStored > 0 ? std::clamp(int(std::lround(scale[s] / dStored)), -128, 127) : 0);
        const float step = dStored * float(sc[s]);
        for (int i = 0; i < 16; ++i)
            q[16 * s + i] =
                step != 0 ? std::uint8_t(std::clamp(int(std::lround(x[16 * s + i] / step)) + 32, 0, 63)) : 32;
    }
    // Per half of 128: low nibbles of values l and l + 64 share a byte (and l + 32, l + 96 the next 32
    // bytes); the top 2 bits of l, l + 32, l + 64, l + 96 share one byte.
    std::uint8_t ql[128], qh[64];
    for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 32; ++l) {
            const std::uint8_t* v = q + 128 * h + l;
            ql[64 * h + l] = std::uint8_t((v[0] & 0xF) | ((v[64] & 0xF) << 4));
            ql[64 * h + l + 32] = std::uint8_t((v[32] & 0xF) | ((v[96] & 0xF) << 4));
            qh[32 * h + l] =
                std::uint8_t((v[0] >> 4) | ((v[32] >> 4) << 2) | ((v[64] >> 4) << 4) | ((v[96] >> 4) << 6));
        }
    out.insert(out.end(), ql, ql + 128);
    out.insert(out.end(), qh, qh + 64);
    for (std::int8_t s : sc) out.push_back(std::uint8_t(s));
    putHalf(out, d);
}

std::vector<std::uint8_t> encode(GgmlType type, const std::vector<float>& values, std::int64_t K) {
    std::vector<std::uint8_t> out;
    if (type == GgmlType::F32) {
        out.resize(values.size() * 4);
        std::memcpy(out.data(), values.data(), out.size());
    } else if (type == GgmlType::F16) {
        for (float v : values) putHalf(out, v);
    } else if (type == GgmlType::Q4_K || type == GgmlType::Q6_K) {
        for (std::size_t b = 0; b < values.size(); b += 256)
            (type == GgmlType::Q4_K ? quantizeQ4K : quantizeQ6K)(values.data() + b, out);
    } else {
        for (std::size_t r = 0; r < values.size(); r += std::size_t(K)) quantizeRow(type, values.data() + r, K, out);
    }
    return out;
}

// llama.cpp's rule for which layers get more bits in its _M presets: the first and last eighth, and
// every third layer between.
bool moreBits(int layer, int layers) {
    return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

int layerOf(const std::string& name) { return name.rfind("h.", 0) == 0 ? std::stoi(name.substr(2)) : -1; }

GgmlType tensorType(GgufFileType file, const MatrixSpec& spec, const ModelConfig& c) {
    if (spec.rows == 1) return GgmlType::F32;
    switch (file) {
        case GgufFileType::F32: return GgmlType::F32;
        case GgufFileType::F16: return spec.name == "wpe.weight" ? GgmlType::F32 : GgmlType::F16;
        case GgufFileType::Q8_0: return spec.name == "wpe.weight" ? GgmlType::F32 : GgmlType::Q8_0;
        case GgufFileType::Q4_0:
            if (spec.name == "wpe.weight") return GgmlType::F32;
            return outputChannelsAreRows(spec) ? GgmlType::Q8_0 : GgmlType::Q4_0;
        case GgufFileType::Q4_K_M: {
            if (spec.name == "wpe.weight") return GgmlType::F32;
            const bool widened = spec.name.find("attn.c_attn.weight") != std::string::npos ||
                                 spec.name.find("mlp.c_proj.weight") != std::string::npos;
            const bool six = outputChannelsAreRows(spec) || (widened && moreBits(layerOf(spec.name), c.layers));
            // K-quants need rows of whole super-blocks (256 values); narrower ones (GPT-2 1.5B's 1600)
            // take llama.cpp's stand-ins: Q8_0 for Q6_K, Q5_0 for Q4_K.
            const std::int64_t rowLength = storedTransposed(spec.name) ? spec.sourceShape[0] : spec.sourceShape[1];
            if (rowLength % 256 != 0) return six ? GgmlType::Q8_0 : GgmlType::Q5_0;
            return six ? GgmlType::Q6_K : GgmlType::Q4_K;
        }
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
        case GgufFileType::Q4_K_M: return 15;
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
    if (name == "Q4_K_M") return GgufFileType::Q4_K_M;
    fail("--type must be F32, F16, Q8_0, Q4_0 or Q4_K_M, got \"", name, "\"");
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
    std::string name = inDir;
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    m.text("general.name", name.substr(name.find_last_of('/') + 1));  // the folder's name
    m.u32("gpt2.block_count", std::uint32_t(c.layers));
    m.u32("gpt2.context_length", std::uint32_t(c.contextLength));
    m.u32("gpt2.embedding_length", std::uint32_t(c.embedDim));
    m.u32("gpt2.feed_forward_length", std::uint32_t(c.innerDim));
    m.u32("gpt2.attention.head_count", std::uint32_t(c.heads));
    m.f32("gpt2.attention.layer_norm_epsilon", c.layerNormEpsilon);
    m.u32("general.file_type", fileTypeNumber(type));
    if (type != GgufFileType::F32 && type != GgufFileType::F16) m.u32("general.quantization_version", 2);
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
        const std::vector<std::int64_t> dims = ggufDims(spec.name, spec.sourceShape);
        const GgmlType t = tensorType(type, spec, c);
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
        // Hugging Face's [in, out] -> GGUF's [out, in].
        if (storedTransposed(t.spec.name)) values = transposed(values, t.spec.sourceShape[0], t.spec.sourceShape[1]);
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
