#include "model/gpt2_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/ops/pointwise.h"
#include "util/error.h"

namespace gpt2 {

namespace {
// The layers' attention scratch, as the policy shapes it: a decode step's scores, a prompt chunk's
// (queries tiled as the matmuls' rows are, and read as fp16 row pairs with the matmuls' inputs), and
// the blocks of keys of long decode steps.
AttentionScratch declareAttentionScratch(Activations& t, const Tuning& tuning, const ModelConfig& c, int headTexels) {
    AttentionScratch s;
    s.rows = tuning.rowsPerFragment;
    const int runRows = c.heads * attentionStride(tuning.prefillChunk, s.rows), P = c.contextLength;
    s.stepScores = &t.add("attention scores", c.heads, P);                          // [H, P]
    s.runScores = &t.addInterleaved("chunk attention scores", runRows, P, s.rows);  // [H * chunk, P]
    s.runRowMax = &t.add("chunk attention row maxima", runRows, 1);                 // [H * chunk, 1]
    if (tuning.halfPromptInputs && s.rows > 1)
        s.runQueries = &t.addHalfPairs("chunk queries", tuning.prefillChunk, c.heads * headTexels * 4);  // [chunk, Cq]
    KeyBlocks& blocks = s.keyBlocks;
    blocks.blockKeys = tuning.attentionBlockKeys;
    if (blocks.blockKeys <= 0) return s;
    const int rows = c.heads * ((P + blocks.blockKeys - 1) / blocks.blockKeys);
    blocks.partial = &t.add("attention blocks", rows, headTexels * 4);
    blocks.stats = &t.add("attention block stats", rows, headTexels * 4);
    return s;
}

float attentionScale(const ModelConfig& c, int layer) {
    const float scale = c.scaleAttentionWeights ? 1.0f / std::sqrt(float(c.headDim())) : 1.0f;
    return c.scaleAttentionByInverseLayer ? scale / float(layer + 1) : scale;
}
}  // namespace

struct Gpt2Model::Block {
    Linear qkv;
    std::vector<Pass> storeKv;  // an fp16 cache's k and v rows, from the fp32 rows qkv wrote
    AttentionOp attention;
    Linear attnOut, mlpUp, mlpDown;
    // A caller's interventions (model/interventions.h), read by the passes above: 1 or 0 per column of
    // the attention output (heads) and of the MLP's hidden units, and the steering vector that c_proj
    // adds after its bias.
    Texture *headMask, *neuronMask, *steering;

    void runQkv(int pos0, int count) {
        qkv.run(pos0, count);
        for (Pass& store : storeKv) store.run(pos0, pos0 + count);
    }
};

Gpt2Model::Gpt2Model(const ModelConfig& config, const ModelOptions& options, const BlockFormats& blocks,
                     const DeclareReadouts& declareReadouts)
    : Gpt2Model(config, options, ProgramCache::Mode::Building, blocks, declareReadouts) {
    // Every texture is declared and none is allocated yet: a phone's tab dies while allocating more
    // than it survives, so a cap refuses before.
    if (options.maxGpuBytes > 0 && double(gpuBytes()) > options.maxGpuBytes)
        fail("this model's textures would take ", megabytes(gpuBytes()), " of GPU memory (weights ",
             megabytes(weights_.bytes()), ", activations and KV cache ", megabytes(activations_.bytes()),
             "), more than maxGpuBytes ", megabytes(std::int64_t(options.maxGpuBytes)),
             "; try int8 or int4 weights, a 4-bit GGUF file, or a smaller model");
    weights_.allocate();
    activations_.allocate();
    applyInterventions(InterventionPlan(), true);
}

Gpt2Model::Gpt2Model(const ModelConfig& config, const ModelOptions& options, ProgramCache::Mode mode,
                     const BlockFormats& blocks, const DeclareReadouts& declareReadouts)
    : config_(config),
      tuning_(tuningFor(options, config)),
      programs_(mode, tuning_.halfNibbles ? "#define HALF_NIBBLES 1\n" : ""),
      weights_(config, tuning_.weights, tuning_.caps.limits, Texture::Allocation::Later, blocks),
      activations_(tuning_) {
    weights_.useGpuPasses(programs_);
    declareGraph(declareReadouts);
}

std::int64_t Gpt2Model::plannedGpuBytes(const ModelConfig& config, const ModelOptions& options,
                                        const BlockFormats& blocks, const DeclareReadouts& declareReadouts) {
    return Gpt2Model(config, options, ProgramCache::Mode::Planning, blocks, declareReadouts).gpuBytes();
}

Gpt2Model::~Gpt2Model() = default;

// The graph, as picoGPT writes the math. Shapes: P positions, C = n_embd, Cq = Q/K/V columns (heads
// padded to whole texels), F = the MLP's inner width, V = the vocabulary.
void Gpt2Model::declareGraph(const DeclareReadouts& declareReadouts) {
    const ModelConfig& c = config_;
    const EngineDims d = engineDims(c);
    const int P = c.contextLength, Cq = d.headsTexels * 4;
    shape_ = {c.heads, d.headTexels};
    auto w = [&](const std::string& name) { return &weights_[name]; };
    auto W = [&](const std::string& name) { return weights_.matrix(name); };
    auto ln = [&](const std::string& prefix) { return LayerNormWeights{w(prefix + "weight"), w(prefix + "bias")}; };
    Activations& t = activations_;
    ids_ = &t.add("token ids", P, 1);                                            // [P, 1]
    Texture& x = *(residual_ = &t.addPerPosition("residual A", P, c.embedDim));  // [P, C]
    Texture& x1 = t.addPerPosition("residual B", P, c.embedDim);                 // [P, C] x within a block
    Texture& q = t.addPerPosition("queries", P, Cq);                             // [P, Cq]
    // [P, Cq] (rows to whole groups: a chunk's attention writes groups of rows)
    Texture& attended = t.addPerPosition("attention output", tuning_.tiledRows(P), Cq);
    Texture& hidden = t.addPerPosition("mlp hidden", P, c.innerDim);  // [P, F]
    Texture& logits = t.add("logits", 1, d.vocabRows);                // [1, V] the last position's
    LinearPlanner plan(programs_, tuning_, t, c.layerNormEpsilon);
    attentionScratch_ = declareAttentionScratch(t, tuning_, c, d.headTexels);
    const Epilogue act = activationEpilogue(c.activation);  // GELU (tanh) in GPT-2
    // Where split-K runs, an fp16 K/V cache gets its rows through fp32 rows shared by the layers:
    // split-K blends its partial sums into those, where a blend into fp16 would round each.
    const bool viaRows = tuning_.kvCache == TexelFormat::Float16 && tuning_.splitTexels > 0;
    Texture* kRows = viaRows ? &t.addPerPosition("k rows", P, Cq) : nullptr;  // [P, Cq]
    Texture* vRows = viaRows ? &t.addPerPosition("v rows", P, Cq) : nullptr;  // [P, Cq]

    // x = wte[ids] + wpe[positions]
    embed_ = std::make_unique<Pass>(embeddingPass(programs_, x, *ids_, W("wte.weight"), *w("wpe.weight")));
    for (int l = 0; l < c.layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        Texture& k = t.addPerPosition(h + "k cache", P, Cq, tuning_.kvCache);  // [P, Cq]
        Texture& v = t.addPerPosition(h + "v cache", P, Cq, tuning_.kvCache);  // [P, Cq]
        Texture& headMask = t.add(h + "head mask", 1, Cq);                     // [1, Cq]
        Texture& neuronMask = t.add(h + "neuron mask", 1, c.innerDim);         // [1, F]
        Texture& steering = t.add(h + "steering", 1, c.embedDim);              // [1, C]
        std::vector<Pass> storeKv;
        if (viaRows) {
            storeKv.push_back(activationPass(programs_, k, *kRows, int(Epilogue::None)));
            storeKv.push_back(activationPass(programs_, v, *vRows, int(Epilogue::None)));
        }
        blocks_.push_back(Block{
            // q, k, v = ln_1(x) @ W_qkv + b_qkv  (k and v into the cache rows of their positions)
            plan.linear({.outputs = {&q, viaRows ? kRows : &k, viaRows ? vRows : &v},
                         .x = &x,
                         .norm = ln(h + "ln_1."),
                         .weight = W(h + "attn.c_attn.weight"),
                         .bias = w(h + "attn.c_attn.bias")}),
            std::move(storeKv),
            // attended = softmax(q k^T * scale, causal) v
            AttentionOp(programs_, attended, q, k, v, shape_, attentionScale(c, l), attentionScratch_, &headMask),
            // x1 = x + attended @ W_o + b_o
            plan.linear({.outputs = {&x1},
                         .x = &attended,
                         .weight = W(h + "attn.c_proj.weight"),
                         .bias = w(h + "attn.c_proj.bias"),
                         .residual = &x}),
            // hidden = act(ln_2(x1) @ W_fc + b_fc)
            plan.linear({.outputs = {&hidden},
                         .x = &x1,
                         .norm = ln(h + "ln_2."),
                         .weight = W(h + "mlp.c_fc.weight"),
                         .bias = w(h + "mlp.c_fc.bias"),
                         .columnMask = &neuronMask,
                         .activation = act}),
            // x = x1 + hidden @ W_proj + b_proj
            plan.linear({.outputs = {&x},
                         .x = &hidden,
                         .weight = W(h + "mlp.c_proj.weight"),
                         .bias = w(h + "mlp.c_proj.bias"),
                         .residual = &x1,
                         .addend = &steering}),
            &headMask, &neuronMask, &steering});
    }
    // logits = ln_f(x[last]) @ wte^T (lm_head^T when untied, [V, C] as wte), one row: only the last
    // position's are read
    const LinearDecl head{.outputs = {&logits},
                          .x = &x,
                          .norm = ln("ln_f."),
                          .weight = W(c.tieWordEmbeddings ? "wte.weight" : "lm_head.weight"),
                          .transposedWeight = true,
                          .oneRowOnly = true};
    lmHead_ = std::make_unique<Linear>(plan.linear(head));

    // The next token and the readouts, beside the forward (readouts/readouts.h).
    if (declareReadouts)
        declareReadouts(
            {.model = *this, .activations = activations_, .plan = plan, .head = head, .ids = *ids_, .logits = logits});
    plan.finish();
}

std::int64_t Gpt2Model::gpuBytes() const { return weights_.bytes() + activations_.bytes(); }

// One transformer block for positions [pos0, pos0 + count).
void Gpt2Model::runLayer(int layer, int pos0, int count) {
    Block& b = blocks_[std::size_t(layer)];
    b.runQkv(pos0, count);
    b.attention.run(pos0, count);
    b.attnOut.run(pos0, count);
    b.mlpUp.run(pos0, count);
    b.mlpDown.run(pos0, count);
}

void Gpt2Model::runAttentionScores(int layer, int pos0, int count) {
    blocks_[std::size_t(layer)].runQkv(pos0, count);
    blocks_[std::size_t(layer)].attention.runScores(pos0, count);
}

void Gpt2Model::runBlocks(int pos0, int count, int blocks, bool observed) {
    embed_->run(pos0, pos0 + count);
    for (int l = 0; l < blocks; ++l) {
        runLayer(l, pos0, count);
        if (const BlockInterventions* hooks = interventions_.block(l))
            for (const auto& [position, vector] : hooks->patched)
                if (position >= pos0 && position < pos0 + count) residual_->uploadRows(position, 1, vector.data());
        if (observed && observer_) observer_->afterLayer(l, pos0, count);
        // A prompt chunk is handed to a browser's GPU process a block at a time, which it can
        // interleave with the page's frames; as one piece it stalls the page (docs/architecture.md, "What the
        // tuning decides, and why").
        if (count > 1) glFlush();
    }
}

bool Gpt2Model::runChunk() {
    if (chunkNext_ >= chunkEnd_) fail("runChunk: no forward in progress (call beginForward)");
    const int pos0 = chunkNext_, count = std::min(tuning_.prefillChunk, chunkEnd_ - pos0);
    runBlocks(pos0, count, config_.layers, true);
    if (observer_) observer_->afterChunk(pos0, count);
    chunkNext_ = pos0 + count;
    if (chunkNext_ < chunkEnd_) {
        chunkFences_.push_back(GlFence::insert());
        if (int(chunkFences_.size()) > tuning_.chunksInFlight) chunkFences_.pop_front();
        return false;
    }
    lmHead_->run(0, chunkEnd_ - 1, 1);
    lastPosition_ = chunkEnd_ - 1;
    chunkFences_.clear();
    return true;
}

bool Gpt2Model::chunkDone() const {
    // Fences signal in the order they were inserted: the oldest kept one decides.
    return int(chunkFences_.size()) < tuning_.chunksInFlight || chunkFences_.front().signaled();
}

void Gpt2Model::forward(const std::vector<int>& ids, int pos0) {
    beginForward(ids, pos0);
    while (!runChunk()) {
    }
}

void Gpt2Model::checkPositions(std::size_t count, int pos0) {
    if (!weightsChecked_) {
        weights_.checkComplete("model");
        weightsChecked_ = true;
    }
    if (count == 0) fail("forward: no tokens to run");
    if (pos0 < 0 || pos0 + std::int64_t(count) > config_.contextLength)
        fail("forward: positions [", pos0, ", ", pos0 + std::int64_t(count), ") exceed the model's context of ",
             config_.contextLength, " tokens");
}

void Gpt2Model::uploadIds(const std::vector<int>& ids, int pos0) {
    checkPositions(ids.size(), pos0);
    if (listener_) listener_->rewritingFrom(pos0);
    std::vector<float> values(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0 || ids[i] >= config_.vocabSize)
            fail("token id ", ids[i], " at position ", pos0 + int(i), " is outside the vocabulary [0, ",
                 config_.vocabSize, ")");
        values[i] = float(ids[i]);
    }
    ids_->uploadRows(pos0, int(ids.size()), values.data());
}

void Gpt2Model::beginForward(const std::vector<int>& ids, int pos0) {
    chunkNext_ = chunkEnd_ = 0;
    chunkFences_.clear();
    if (listener_) listener_->runStarting();
    uploadIds(ids, pos0);
    startChunks(pos0, pos0 + int(ids.size()));
}

void Gpt2Model::forwardWrittenToken(int pos) {
    checkPositions(1, pos);
    if (listener_) listener_->rewritingFrom(pos);
    startChunks(pos, pos + 1);
    runChunk();
}

void Gpt2Model::startChunks(int pos0, int end) {
    if (observer_) observer_->startRun(pos0, end);
    chunkNext_ = pos0;
    chunkEnd_ = end;
}

void Gpt2Model::runSequence(const std::vector<int>& ids, int blocks,
                            const std::function<void(int start, int n)>& after) {
    chunkNext_ = chunkEnd_ = 0;  // a forward in progress cannot go on over the rewritten id rows
    chunkFences_.clear();
    if (listener_) listener_->runStarting();
    uploadIds(ids, 0);
    const int count = int(ids.size());
    for (int start = 0; start < count; start += tuning_.prefillChunk) {
        const int n = std::min(tuning_.prefillChunk, count - start);
        runBlocks(start, n, blocks, false);
        after(start, n);
    }
}

void Gpt2Model::endSequence() { lastPosition_ = -1; }

void Gpt2Model::setInterventions(const InterventionPlan& plan) {
    if (plan == interventions_) return;
    applyInterventions(plan, false);
}

void Gpt2Model::applyInterventions(const InterventionPlan& plan, bool all) {
    const ModelConfig& c = config_;
    const BlockInterventions none = BlockInterventions::none(c);
    // 1 per column, 0 where column / group is ablated.
    const auto mask = [](const std::vector<bool>& ablated, int cols, int group) {
        std::vector<float> values(std::size_t(cols), 1.0f);
        for (int col = 0; col < cols; ++col)
            if (ablated[std::size_t(col / group)]) values[std::size_t(col)] = 0.0f;
        return values;
    };
    for (int l = 0; l < c.layers; ++l) {
        const BlockInterventions* now = plan.block(l);
        const BlockInterventions* before = interventions_.block(l);
        const BlockInterventions& want = now ? *now : none;
        const BlockInterventions& had = before ? *before : none;
        Block& b = blocks_[std::size_t(l)];
        // A head's columns of the attention output: its texels (heads padded to whole texels).
        if (all || want.heads != had.heads)
            b.headMask->uploadRows(0, 1, mask(want.heads, b.headMask->layout().cols, shape_.headTexels * 4).data());
        if (all || want.neurons != had.neurons)
            b.neuronMask->uploadRows(0, 1, mask(want.neurons, c.innerDim, 1).data());
        if (all || want.added != had.added) {
            const std::vector<float> zeros(std::size_t(c.embedDim), 0.0f);
            b.steering->uploadRows(0, 1, want.added.empty() ? zeros.data() : want.added.data());
        }
    }
    interventions_ = plan;
}

}  // namespace gpt2
