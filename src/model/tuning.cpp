#include "model/tuning.h"

#include <algorithm>
#include <limits>

#include "util/error.h"

namespace gpt2 {

TexelFormat weightFormatNamed(const std::string& name) {
    if (name == "fp16") return TexelFormat::Float16;
    if (name == "fp32") return TexelFormat::Float32;
    if (name == "int8") return TexelFormat::Int8Quads;
    fail("weights must be fp16, fp32 or int8, got \"", name, "\"");
}

Tuning tuningFor(const ModelOptions& options, int contextLength) {
    if (options.prefillChunk < 1 && options.prefillChunk != -1)
        fail("prefillChunk must be at least 1 (or -1: the engine decides), got ", options.prefillChunk);
    Tuning t;
    t.caps = queryCapabilities(options.maxTextureSize);
    const GlCapabilities& caps = t.caps;
    if (options.pagedRows >= 0) t.caps.limits.pagedRows = options.pagedRows != 0;
    // Row pairs halve the weight fetches, except where unpacking halves is slow (llvmpipe).
    const bool pairs = options.halfPairs >= 0 ? options.halfPairs != 0 : !caps.slowHalfUnpacking;
    t.weights = options.weights == TexelFormat::Float16 && pairs ? TexelFormat::HalfPairs : options.weights;
    const int chunk = options.prefillChunk > 0 ? options.prefillChunk
                      : caps.softwareRenderer  ? Tuning::kSoftwarePrefillChunk
                                               : Tuning::kGpuPrefillChunk;
    t.prefillChunk = std::min(chunk, contextLength);
    if (options.chunksInFlight == 0 || options.chunksInFlight < -1)
        fail("chunksInFlight must be at least 1 (or -1: the engine decides), got ", options.chunksInFlight);
    t.chunksInFlight = options.chunksInFlight > 0 ? options.chunksInFlight
                       : caps.softwareRenderer    ? 1
                                                  : Tuning::kGpuChunksInFlight;
    // More fragments only add work where the CPU runs them all.
    t.splitTexels = options.splitTexels >= 0                       ? options.splitTexels
                    : caps.softwareRenderer || !caps.floatBlend ? 0
                                                                : Tuning::kGpuSplitTexels;
    if (t.splitTexels > 0 && !caps.floatBlend)
        fail("splitTexels ", t.splitTexels, " needs EXT_float_blend, which this GPU/browser lacks (renderer: ",
             caps.renderer, "); use 0");
    if (options.promptSplitTexels >= 0 && (options.promptSplitTexels > 0) != (t.splitTexels > 0))
        fail("promptSplitTexels ", options.promptSplitTexels, " with splitTexels ", t.splitTexels,
             ": prompt chunks split K exactly where decode steps do (both 0, or both above 0)");
    t.promptSplitTexels = options.promptSplitTexels >= 0 ? options.promptSplitTexels
                          : t.splitTexels > 0             ? std::max(t.splitTexels, Tuning::kGpuPromptSplitTexels)
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
        while (t.rowsPerFragment * 2 <= std::min(caps.renderTargets, Tuning::kMaxRowsPerFragment)) t.rowsPerFragment *= 2;
    }
    if (options.passPerOutput < -1 || options.passPerOutput > 1)
        fail("passPerOutput must be 0 (one pass for all outputs), 1 (a pass per output) or -1 (the engine decides), got ",
             options.passPerOutput);
    t.passPerOutput = options.passPerOutput >= 0 ? options.passPerOutput == 1 : caps.softwareRenderer;
    if (options.rowMomentsInVertex < -1 || options.rowMomentsInVertex > 1)
        fail("rowMomentsInVertex must be 0, 1 or -1 (the engine decides), got ", options.rowMomentsInVertex);
    t.vertexMomentsTexels = options.rowMomentsInVertex == 1   ? std::numeric_limits<int>::max()
                            : options.rowMomentsInVertex == 0 || caps.softwareRenderer ? 0
                                                                                       : Tuning::kGpuVertexMomentsTexels;
    if (options.halfPromptInputs < -1 || options.halfPromptInputs > 1)
        fail("halfPromptInputs must be 0 (fp32), 1 (fp16 row pairs) or -1 (the engine decides), got ",
             options.halfPromptInputs);
    t.halfPromptInputs = options.halfPromptInputs >= 0 ? options.halfPromptInputs == 1
                                                       : !caps.softwareRenderer && t.weights != TexelFormat::Float32;
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

int Tuning::splitFor(const Texture& out) const { return out.layout().rowsAreWholeLines() ? splitTexels : 0; }

int Tuning::promptSplitFor(const Texture& out) const { return out.layout().rowsAreWholeLines() ? promptSplitTexels : 0; }

}  // namespace gpt2
