#pragma once
// How the graph runs on this GPU: the policy, derived once from the GL capabilities and the load
// options (options.json's `tuning`, and the knobs tests use to force layouts). The graph
// (gpt2_model.cpp) is the same whatever this decides; LinearPlanner applies it to the linear layers.
// docs/architecture.md, "What the tuning decides, and why", gives the measurement behind each default.
#include <string>

#include "format/model_config.h"
#include "gl/capabilities.h"
#include "gl/texture.h"
#include "option_defaults.h"

namespace gpt2 {

// The texture format a load option names, as options.json spells it: `weights` "fp16", "fp32", "int8"
// or "int4"; `kvCache` "fp32" or "fp16". Throws on any other value, naming the option.
TexelFormat texelFormatOption(const std::string& option, const std::string& value);
// The name options.json gives `format` (fp16, fp32, int8 or int4), the inverse of texelFormatOption.
const char* texelFormatOptionName(TexelFormat format);

// What runs a model (options.json's `backend`): the GPU's passes, the CPU backend, or the GPU where a
// GL context can be made.
enum class Backend { Auto, WebGl, Cpu };
// The backend an option value names ("auto", "webgl" or "cpu"); throws on any other value.
Backend backendOption(const std::string& value);
// The name options.json gives `backend`, the inverse of backendOption.
const char* backendOptionName(Backend backend);

// The load options of options.json (defaults from there). -1: the policy decides.
struct ModelOptions {
    TexelFormat weights = texelFormatOption("weights", defaults::weights);  // Float16: stored as halfPairs decides
    int maxTextureSize =
        defaults::maxTextureSize;  // > 0: pretend the GPU allows no larger textures (tests fold with it)
    // Prompts run in chunks of at most this many tokens; the chunk attention scores hold one chunk
    // (heads x chunk x context), which keeps activation memory small next to the KV cache. -1: the
    // policy's.
    int prefillChunk = -1;
    // Texels per line of activation textures: -1 the policy's, 0 rows unfolded, > 0 that many.
    int activationLineWidth = -1;
    // Split-K: input texels per blended instance of the matmuls whose output rows are whole lines; 0 one
    // loop. Split matmuls also get a one-row variant for decode steps (LinearPlanner).
    int splitTexels = -1;
    // Matrices taller than a texture page one row per line over power-of-two pages
    // (TextureLimits::pagedRows): 0 never, 1 always.
    int pagedRows = -1;
    // fp16 weights as row pairs in RGBA32UI (TexelFormat::HalfPairs) or RGBA16F: 0 RGBA16F, 1 row pairs.
    int halfPairs = -1;
    // Decode steps over more keys than this split attention over blocks of this many keys (a multiple
    // of 4; flash-decoding, KeyBlocks): 0 never.
    int attentionBlockKeys = -1;
    // Rows per fragment of the matmuls over prompt chunks (a power of two; 1 off).
    int rowsPerFragment = -1;
    // Split-K of the matmuls over prompt chunks: input texels per blended instance (> 0 where
    // splitTexels is; 0 where it is 0).
    int promptSplitTexels = -1;
    // A projection with several outputs (the fused Q/K/V) as one pass writing them all (0) or a pass
    // per output (1). -1: the policy's.
    int passPerOutput = -1;
    // One-row matmuls sum their input LayerNorm's row moments themselves (1) or read them from a
    // pass of their own (0). -1: the policy's (Tuning::vertexMomentsTexels).
    int rowMomentsInVertex = -1;
    // The LayerNorm and activation passes of prompt chunks write fp16 row pairs (1) or fp32 rows (0)
    // for the matmuls after them, and the chunks' attention scores read their queries as such pairs
    // (1) or from the queries texture (0). -1: the policy's (Tuning::halfPromptInputs).
    int halfPromptInputs = -1;
    // 4-bit codes unpacked as halves (1) or by integer-to-float conversions (0). -1: the policy's
    // (Tuning::halfNibbles).
    int halfNibbles = -1;
    // Prompt chunks a polling caller keeps queued (Tuning::chunksInFlight), at least 1. -1: the policy's.
    int chunksInFlight = -1;
    // > 0: pretend a framebuffer may carry no more colour bits than this (GlCapabilities::colorBits).
    int maxColorBits = 0;
    // The device is a phone or tablet (CapabilityOptions::phone; the web build asks the page).
    bool phone = false;
    // > 0: refuse, before allocating any texture, a model whose textures would take more bytes.
    double maxGpuBytes = defaults::maxGpuBytes;
    // The K and V caches' texture format: Float32 or Float16.
    TexelFormat kvCache = texelFormatOption("kvCache", defaults::kvCache);
    Backend backend = backendOption(defaults::backend);
};

struct Tuning {
    GlCapabilities caps;  // limits with the pagedRows decision applied
    TexelFormat weights = TexelFormat::Float32;
    TexelFormat kvCache = TexelFormat::Float32;  // of the K and V caches: Float32 or Float16
    // Prompt tokens per chunk: GPUs fill their passes better with more rows (gpuPrefillChunk); on
    // software renderers a chunk is what a browser's frame or an abort may wait for
    // (docs/architecture.md, "What the tuning decides, and why").
    int prefillChunk = 32;
    // Prompt chunks a caller that polls (Gpt2Model::chunkDone, the browsers) keeps queued: on GPUs the
    // next chunk is issued while the one before runs, which hides the round trip between them; on
    // software renderers one at a time, since a chunk there is what an abort or another call waits
    // for (docs/benchmarks/journal.md, "Two prompt chunks in flight").
    int chunksInFlight = 1;
    // Split-K of matmuls whose output rows are whole lines (0: one loop). Where > 0, LayerNorms also
    // sum their row moments in a pass of their own, the decode step's matmuls get one-row variants
    // that fetch (and normalise) their input in the vertex shader, and c_fc leaves its activation to
    // its consumer (a split sum cannot be activated).
    int splitTexels = 0;
    // The split-K of the one-row matmuls over int8 and 4-bit weights: where splitTexels > 0, as many
    // input texels per instance as their vertices can hand their fragments, up to 16. Blending an
    // RGBA32F fragment costs as much as a fragment's loop of 8 such texels (an H200 blends about 10^9
    // a second), so longer loops halve the blends; fp16 weights, whose loops are bound by their
    // fetches, keep splitTexels (docs/benchmarks.md, "What bounds the speed").
    int quantizedRowSplitTexels = 0;
    int forcedLineWidth = -1;  // ModelOptions::activationLineWidth
    // Decode attention over blocks of this many keys once the context is longer (0: one pass): GPUs
    // run a long context's keys in parallel blocks; a CPU gains nothing from more fragments.
    int attentionBlockKeys = 0;
    // Register tiling of prompt chunks: each fragment of a many-row matmul computes this many rows,
    // which share every weight block it fetches and unpacks; the one-row-per-position activations
    // interleave their rows over groups of this many pages (TensorLayout::interleave) so that one
    // fragment writes them all (docs/benchmarks/journal.md, "Row-tiled prompt matmuls"; software renderers
    // gain as much: "Loops written out for software renderers").
    int rowsPerFragment = 1;
    // Split-K of the matmuls over prompt chunks: with many rows (and rowsPerFragment rows per
    // fragment) fewer blended instances give the GPU enough fragments, and every instance blends its
    // rows into the output.
    int promptSplitTexels = 0;
    // The fused Q/K/V projection as a pass per output on software renderers: SwiftShader runs a pass
    // writing three render targets slower than three passes of one, and there a pass costs little
    // (docs/benchmarks/journal.md, "Loops written out for software renderers"). GPUs save the passes.
    bool passPerOutput = false;
    // The one-row matmul after a LayerNorm sums the row's moments in its vertex shader (every vertex
    // reads the whole row) instead of reading them from a pass of their own, for rows of at most this
    // many texels: for a narrow model the pass costs more than those fetches, for a wide one the
    // vertices' serial loop costs more (docs/benchmarks/journal.md, "Row moments in the vertex shader").
    int vertexMomentsTexels = 0;
    // The matmuls over prompt chunks read their input rows as fp16 row pairs, which the LayerNorm or
    // activation pass before them writes: half the input fetches, which are most of a row-tiled
    // fragment's fetches. On GPUs with fp16 or int8 weights, whose values are no finer (fp32 weights
    // keep fp32 inputs); docs/benchmarks/journal.md, "Prompt matmul inputs as fp16 row pairs". The chunk's
    // attention scores, which fetch a query texel per row beside four key texels, read the queries as
    // row pairs too, packed by a pass of their own where rowsPerFragment > 1 ("Prompt queries as fp16
    // row pairs").
    bool halfPromptInputs = false;
    // 4-bit codes become floats as halves (each ORed into the mantissa of the half 1024), not through
    // integer-to-float conversions, which bound 4-bit one-row matmuls on an H200; except where
    // unpacking halves is slow (llvmpipe). docs/benchmarks/journal.md, "4-bit codes unpacked as halves".
    bool halfNibbles = false;

    // Rows per fragment of a matmul with `outputs` outputs: rowsPerFragment, fewer where the render
    // targets (outputs x rows) would exceed what a draw can write.
    int rowsPerFragmentFor(int outputs) const;
    // Whether one draw may write `targets` render targets (GlCapabilities::renderTargets).
    bool oneDrawWrites(int targets) const { return targets <= caps.renderTargets; }
    // Whether a many-row matmul with `outputs` outputs runs a pass per output: passPerOutput, or where
    // a draw cannot write them all (a colour-bits cap of two targets, and the fused Q/K/V's three).
    bool passPerOutputFor(int outputs) const { return passPerOutput || !oneDrawWrites(outputs); }
    bool rowMomentsInVertex(int rowTexels) const { return rowTexels <= vertexMomentsTexels; }
    // `rows` rounded up to whole groups of rowsPerFragment rows.
    int tiledRows(int rows) const { return (rows + rowsPerFragment - 1) / rowsPerFragment * rowsPerFragment; }

    // Texels per line for an activation of `rows` x `texels`: lines of up to kActivationLineWidth
    // texels that hold whole rows (the largest power of two, at least 8, dividing the row); else whole
    // rows per line where split-K needs them and kActivationLineWidth lines on software renderers.
    // One row: always kActivationLineWidth, so that a decode row covers a 2D block of fragments
    // (rasterisers shade 2 x 2 quads; a one-line draw runs half its lanes as helpers).
    int lineWidth(int rows, int texels) const;
    // The split-K of a matmul into `outputs`: splitTexels (promptSplitTexels for the passes over
    // prompt chunks) where their rows are whole lines and they are RGBA32F, else 0 (a blend into
    // fp16 would round every partial sum: Gpt2Model gives an fp16 K/V cache fp32 rows to blend into).
    int splitFor(const std::vector<Texture*>& outputs) const;
    int promptSplitFor(const std::vector<Texture*>& outputs) const;
    // The split-K of the one-row matmul into `outputs` over weights of `weights`' format.
    int rowSplitFor(const std::vector<Texture*>& outputs, TexelFormat weights) const;

    static constexpr int kActivationLineWidth = 32;
    static constexpr int kGpuSplitTexels = 8;
    static constexpr int kGpuQuantizedRowSplitTexels = 16;
    static constexpr int kGpuPromptSplitTexels = 32;
    static constexpr int kGpuPrefillChunk = 128;
    static constexpr int kGpuLongPrefillChunk = 256;
    static constexpr int kSoftwarePrefillChunk = 32;
    static constexpr int kGpuChunksInFlight = 2;
    static constexpr int kGpuAttentionBlockKeys = 64;
    static constexpr int kMaxRowsPerFragment = 8;
    static constexpr int kGpuVertexMomentsTexels = 64;
};

// Prompt tokens per chunk on a GPU: kGpuLongPrefillChunk where such a chunk multiplies by no more
// weights than one of GPT-2 124M's (layers x n_embd x (4 n_embd + 2 n_inner)), else
// kGpuPrefillChunk. Longer chunks take fewer passes per token; a chunk (two, with chunksInFlight)
// is what an abort waits for, so larger models keep the shorter one (docs/benchmarks/journal.md, "Prompt chunks
// of 256 tokens for models up to 124M's size").
int gpuPrefillChunk(const ModelConfig& config);

// The policy's split-K of the one-row matmuls over int8 and 4-bit weights on a GPU with
// `varyingVectors` (GL_MAX_VARYING_VECTORS): kGpuQuantizedRowSplitTexels input texels, fewer where
// the vertex shader cannot hand them and the instance to the fragments.
int gpuQuantizedRowSplitTexels(int varyingVectors);

// Throws when an option asks for what this context cannot do (split-K without EXT_float_blend).
Tuning tuningFor(const ModelOptions& options, const ModelConfig& config);

}  // namespace gpt2
