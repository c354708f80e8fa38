#include "model/tuning.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "util/error.h"

namespace gpt2 {

namespace {
// options.json's names of the formats a load option takes; kvCache takes the first two.
constexpr std::pair<const char*, TexelFormat> kFormatNames[] = {{"fp16", TexelFormat::Float16},
                                                                {"fp32", TexelFormat::Float32},
                                                                {"int8", TexelFormat::Int8Quads},
                                                                {"int4", TexelFormat::Int4Quads}};
}  // namespace

TexelFormat texelFormatOption(const std::string& option, const std::string& value) {
    const bool weights = option == "weights";
    for (std::size_t i = 0; i < (weights ? 4 : 2); ++i)
        if (value == kFormatNames[i].first) return kFormatNames[i].second;
    fail(option, " must be ", weights ? "fp16, fp32, int8 or int4" : "fp32 or fp16", ", got \"", value, "\"");
}

namespace {
constexpr std::pair<const char*, Backend> kBackendNames[] = {
    {"auto", Backend::Auto}, {"webgl", Backend::WebGl}, {"cpu", Backend::Cpu}};
}  // namespace

Backend backendOption(const std::string& value) {
    for (const auto& [name, backend] : kBackendNames)
        if (value == name) return backend;
    fail("backend must be auto, webgl or cpu, got \"", value, "\"");
}

const char* backendOptionName(Backend backend) {
    for (const auto& [name, named] : kBackendNames)
        if (named == backend) return name;
    fail("backend ", int(backend), " has no option name");
}

const char* texelFormatOptionName(TexelFormat format) {
    for (const auto& [name, named] : kFormatNames)
        if (named == format) return name;
    fail("texel format ", int(format), " has no option name");
}

namespace {
// A switch of ModelOptions: 0 (`off`) or 1 (`on`) as forced, or -1 for the policy's `fallback`.
bool switchOption(int value, const char* name, const char* off, const char* on, bool fallback) {
    if (value < -1 || value > 1)
        fail(name, " must be 0 (", off, "), 1 (", on, ") or -1 (the engine decides), got ", value);
    return value == -1 ? fallback : value == 1;
}
}  // namespace

int gpuPrefillChunk(const ModelConfig& config) {
    const auto tokenWeights = [](std::int64_t layers, std::int64_t embed, std::int64_t inner) {
        return layers * embed * (4 * embed + 2 * inner);  // Q, K, V, the projection, and the MLP's two
    };
    const bool small =
        tokenWeights(config.layers, config.embedDim, config.innerDim) <= tokenWeights(12, 768, 3072);  // 124M
    return small ? Tuning::kGpuLongPrefillChunk : Tuning::kGpuPrefillChunk;
}

int gpuQuantizedRowSplitTexels(int varyingVectors) {
    return std::clamp(varyingVectors - 1, 1, Tuning::kGpuQuantizedRowSplitTexels);
}

Tuning tuningFor(const ModelOptions& options, const ModelConfig& config) {
    if (options.prefillChunk < 1 && options.prefillChunk != -1)
        fail("prefillChunk must be at least 1 (or -1: the engine decides), got ", options.prefillChunk);
    Tuning t;
    t.caps = queryCapabilities({options.maxTextureSize, options.maxColorBits, options.phone});
    const GlCapabilities& caps = t.caps;
    if (options.pagedRows >= 0) t.caps.limits.pagedRows = options.pagedRows != 0;
    // Row pairs halve the weight fetches, except where unpacking halves is slow (llvmpipe).
    const bool pairs = options.halfPairs >= 0 ? options.halfPairs != 0 : !caps.slowHalfUnpacking;
    t.weights = options.weights == TexelFormat::Float16 && pairs ? TexelFormat::HalfPairs : options.weights;
    if (options.kvCache != TexelFormat::Float32 && options.kvCache != TexelFormat::Float16)
        fail("kvCache must be fp32 or fp16");
    t.kvCache = options.kvCache;
    const int chunk = options.prefillChunk > 0 ? options.prefillChunk
                      : caps.softwareRenderer  ? Tuning::kSoftwarePrefillChunk
                                               : gpuPrefillChunk(config);
    t.prefillChunk = std::min(chunk, config.contextLength);
    if (options.chunksInFlight == 0 || options.chunksInFlight < -1)
        fail("chunksInFlight must be at least 1 (or -1: the engine decides), got ", options.chunksInFlight);
    t.chunksInFlight = options.chunksInFlight > 0 ? options.chunksInFlight
                       : caps.softwareRenderer    ? 1
                                                  : Tuning::kGpuChunksInFlight;
    // More fragments only add work where the CPU runs them all.
    t.splitTexels = options.splitTexels >= 0                    ? options.splitTexels
                    : caps.softwareRenderer || !caps.floatBlend ? 0
                                                                : Tuning::kGpuSplitTexels;
    if (t.splitTexels > 0 && !caps.floatBlend)
        fail("splitTexels ", t.splitTexels,
             " needs EXT_float_blend, which this GPU/browser lacks (renderer: ", caps.renderer, "); use 0");
    t.quantizedRowSplitTexels = options.splitTexels >= 0 || t.splitTexels == 0
                                    ? t.splitTexels
                                    : gpuQuantizedRowSplitTexels(caps.varyingVectors);
    if (options.promptSplitTexels >= 0 && (options.promptSplitTexels > 0) != (t.splitTexels > 0))
        fail("promptSplitTexels ", options.promptSplitTexels, " with splitTexels ", t.splitTexels,
             ": prompt chunks split K exactly where decode steps do (both 0, or both above 0)");
    t.promptSplitTexels = options.promptSplitTexels >= 0 ? options.promptSplitTexels
                          : t.splitTexels > 0            ? std::max(t.splitTexels, Tuning::kGpuPromptSplitTexels)
                                                         : 0;
    t.forcedLineWidth = options.activationLineWidth;
    t.attentionBlockKeys = options.attentionBlockKeys >= 0 ? options.attentionBlockKeys
                           : caps.softwareRenderer         ? 0
                                                           : Tuning::kGpuAttentionBlockKeys;
    if (options.rowsPerFragment >= 0) {
        const int rows = options.rowsPerFragment;
        if (rows < 1 || rows > Tuning::kMaxRowsPerFragment || (rows & (rows - 1)) != 0 || rows > caps.renderTargets)
            fail("rowsPerFragment must be 1, 2, 4 or 8 and at most the ", caps.renderTargets,
                 " render targets this GPU draws to at once, got ", rows);
        t.rowsPerFragment = rows;
    } else {
        while (t.rowsPerFragment * 2 <= std::min(caps.renderTargets, Tuning::kMaxRowsPerFragment))
            t.rowsPerFragment *= 2;
    }
    t.passPerOutput = switchOption(options.passPerOutput, "passPerOutput", "one pass for all outputs",
                                   "a pass per output", caps.softwareRenderer);
    // Forced on: for rows of any width; the policy's: on GPUs, for narrow rows.
    const bool vertexMoments =
        switchOption(options.rowMomentsInVertex, "rowMomentsInVertex", "never", "always", !caps.softwareRenderer);
    t.vertexMomentsTexels = !vertexMoments                    ? 0
                            : options.rowMomentsInVertex == 1 ? std::numeric_limits<int>::max()
                                                              : Tuning::kGpuVertexMomentsTexels;
    t.halfNibbles =
        switchOption(options.halfNibbles, "halfNibbles", "integer conversions", "halves", !caps.slowHalfUnpacking);
    t.halfPromptInputs = switchOption(options.halfPromptInputs, "halfPromptInputs", "fp32", "fp16 row pairs",
                                      !caps.softwareRenderer && t.weights != TexelFormat::Float32);
    if (t.attentionBlockKeys % 4 != 0)
        fail("attentionBlockKeys must be a multiple of 4 (whole texels of scores), got ", t.attentionBlockKeys);
    return t;
}

int Tuning::lineWidth(int rows, int texels) const {
    if (forcedLineWidth >= 0) return forcedLineWidth;
    if (rows == 1) return kActivationLineWidth;
    for (int width = kActivationLineWidth; width >= 8; width /= 2)
        if (texels % width == 0) return width;
    return caps.softwareRenderer ? kActivationLineWidth : 0;
}

int Tuning::rowsPerFragmentFor(int outputs) const {
    int rows = rowsPerFragment;
    while (rows > 1 && rows * outputs > caps.renderTargets) rows /= 2;
    return rows;
}

namespace {
bool blendable(const std::vector<Texture*>& outputs) {
    return std::all_of(outputs.begin(), outputs.end(), [](const Texture* t) {
        return t->layout().rowsAreWholeLines() && t->format() == TexelFormat::Float32;
    });
}
}  // namespace

int Tuning::splitFor(const std::vector<Texture*>& outputs) const { return blendable(outputs) ? splitTexels : 0; }

int Tuning::rowSplitFor(const std::vector<Texture*>& outputs, TexelFormat weights) const {
    const bool quantized = weights == TexelFormat::Int8Quads || weights == TexelFormat::Int4Quads;
    return quantized && blendable(outputs) ? quantizedRowSplitTexels : splitFor(outputs);
}

int Tuning::promptSplitFor(const std::vector<Texture*>& outputs) const {
    return blendable(outputs) ? promptSplitTexels : 0;
}

}  // namespace gpt2
