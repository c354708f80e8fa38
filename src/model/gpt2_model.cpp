#include "model/gpt2_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.h"

namespace gpt2 {

namespace {
// The layers' attention scratch, as the policy shapes it: a decode step's scores, a prompt chunk's
// (queries tiled as the matmuls' rows are, and read as fp16 row pairs with the matmuls' inputs), and
// the blocks of keys of long decode steps.
AttentionScratch attentionScratch(Activations& t, const Tuning& tuning, const ModelConfig& c, int headTexels) {
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

// "1,634.2 MB": what a reader compares at a glance.
std::string megabytes(std::int64_t bytes) {
    const std::int64_t tenths = (bytes + 50'000) / 100'000;
    const std::string whole = std::to_string(tenths / 10);
    std::string grouped;
    for (std::size_t i = 0; i < whole.size(); ++i) {
        if (i > 0 && (whole.size() - i) % 3 == 0) grouped += ',';
        grouped += whole[i];
    }
    return grouped + "." + std::to_string(tenths % 10) + " MB";
}

float attentionScale(const ModelConfig& c, int layer) {
    const float scale = c.scaleAttentionWeights ? 1.0f / std::sqrt(float(c.headDim())) : 1.0f;
    return c.scaleAttentionByInverseLayer ? scale / float(layer + 1) : scale;
}
}  // namespace

struct Gpt2Model::Block {
    Linear qkv;
    AttentionOp attention;
    Linear attnOut, mlpUp, mlpDown;
};

Gpt2Model::Gpt2Model(const ModelConfig& config, const ModelOptions& options)
    : Gpt2Model(config, options, ProgramCache::Mode::Building) {
    // Every texture is declared and none is allocated yet: a phone's tab dies while allocating more
    // than it survives, so a cap refuses before.
    if (options.maxGpuBytes > 0 && double(gpuBytes()) > options.maxGpuBytes)
        fail("this model's textures would take ", megabytes(gpuBytes()), " of GPU memory (weights ",
             megabytes(weights_.bytes()), ", activations and KV cache ", megabytes(activations_.bytes()),
             "), more than maxGpuBytes ", megabytes(std::int64_t(options.maxGpuBytes)),
             "; try int8 weights or a smaller model");
    weights_.allocate();
    activations_.allocate();
}

Gpt2Model::Gpt2Model(const ModelConfig& config, const ModelOptions& options, ProgramCache::Mode mode)
    : config_(config),
      tuning_(tuningFor(options, config)),
      programs_(mode),
      weights_(config, tuning_.weights, tuning_.caps.limits, Texture::Allocation::Later),
      activations_(tuning_) {
    declareGraph();
}

std::int64_t Gpt2Model::plannedGpuBytes(const ModelConfig& config, const ModelOptions& options) {
    return Gpt2Model(config, options, ProgramCache::Mode::Planning).gpuBytes();
}

Gpt2Model::~Gpt2Model() = default;

// The graph, as picoGPT writes the math. Shapes: P positions, C = n_embd, Cq = Q/K/V columns (heads
// padded to whole texels), F = the MLP's inner width, V = the vocabulary.
void Gpt2Model::declareGraph() {
    const ModelConfig& c = config_;
    const EngineDims d = engineDims(c);
    const int P = c.contextLength, Cq = d.headsTexels * 4;
    shape_ = {c.heads, d.headTexels};
    auto w = [&](const std::string& name) { return &weights_[name]; };
    auto W = [&](const std::string& name) { return WeightMatrix{&weights_[name], weights_.scales(name)}; };
    auto ln = [&](const std::string& prefix) { return LayerNormWeights{w(prefix + "weight"), w(prefix + "bias")}; };
    Activations& t = activations_;
    ids_ = &t.add("token ids", P, 1);                                            // [P, 1]
    Texture& x = *(residual_ = &t.addPerPosition("residual A", P, c.embedDim));  // [P, C]
    Texture& x1 = t.addPerPosition("residual B", P, c.embedDim);                 // [P, C] x within a block
    Texture& q = t.addPerPosition("queries", P, Cq);                             // [P, Cq]
    // [P, Cq] (rows to whole groups: a chunk's attention writes groups of rows)
    Texture& attended = t.addPerPosition("attention output", tuning_.tiledRows(P), Cq);
    Texture& hidden = t.addPerPosition("mlp hidden", P, c.innerDim);  // [P, F]
    logits_ = &t.add("logits", 1, d.vocabRows);                       // [1, V] the last position's
    candidates_ = &t.add("top-k candidates", kMaxTopk, 4);            // [k, (logit, id)]
    LinearPlanner plan(programs_, tuning_, t, c.layerNormEpsilon);
    attentionScratch_ = attentionScratch(t, tuning_, c, d.headTexels);
    const Epilogue act = activationEpilogue(c.activation);  // GELU (tanh) in GPT-2

    // x = wte[ids] + wpe[positions]
    embed_ = std::make_unique<Pass>(
        embeddingPass(programs_, x, *ids_, *w("wte.weight"), *w("wpe.weight"), weights_.scales("wte.weight")));
    for (int l = 0; l < c.layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        Texture& k = t.addPerPosition(h + "k cache", P, Cq);  // [P, Cq]
        Texture& v = t.addPerPosition(h + "v cache", P, Cq);  // [P, Cq]
        blocks_.push_back(Block{
            // q, k, v = ln_1(x) @ W_qkv + b_qkv  (k and v into the cache rows of their positions)
            plan.linear({{&q, &k, &v}, &x, ln(h + "ln_1."), W(h + "attn.c_attn.weight"), w(h + "attn.c_attn.bias")}),
            // attended = softmax(q k^T * scale, causal) v
            AttentionOp(programs_, attended, q, k, v, shape_, attentionScale(c, l), attentionScratch_),
            // x1 = x + attended @ W_o + b_o
            plan.linear({{&x1}, &attended, {}, W(h + "attn.c_proj.weight"), w(h + "attn.c_proj.bias"), &x}),
            // hidden = act(ln_2(x1) @ W_fc + b_fc)
            plan.linear(
                {{&hidden}, &x1, ln(h + "ln_2."), W(h + "mlp.c_fc.weight"), w(h + "mlp.c_fc.bias"), nullptr, act}),
            // x = x1 + hidden @ W_proj + b_proj
            plan.linear({{&x}, &hidden, {}, W(h + "mlp.c_proj.weight"), w(h + "mlp.c_proj.bias"), &x1})});
    }
    // logits = ln_f(x[last]) @ wte^T (lm_head^T when untied), one row: only the last position's are read
    LinearDecl head{{logits_}, &x, ln("ln_f."), W(c.tieWordEmbeddings ? "wte.weight" : "lm_head.weight")};
    head.transposedWeight = true;  // [V, C], as wte
    head.oneRowOnly = true;
    lmHead_ = std::make_unique<Linear>(plan.linear(head));
    // scored = ln_f(x[p .. p + kScoreRows)) @ wte^T, and lse[r] = log Σ exp scored[r] (perplexity at
    // rows [0, kScoreRows)); its rows interleave so that the head computes whole row groups
    LinearDecl rows = head;
    const int lensBatch = lensBatchRows();
    Texture& scored = t.addInterleaved("scored logits", std::max(kScoreRows, lensBatch), d.vocabRows,
                                       tuning_.rowsPerFragment);  // [rows, V]
    rows.outputs = {&scored};
    rows.oneRowOnly = false;
    scoreHead_ = std::make_unique<Linear>(plan.linear(rows));
    // lens: after block l, the chunk's rows that get a lens go to lens residuals row l * count + p;
    // once the chunk has run, the head scores them lensBatchRows() at a time into `scored` (a decode
    // step's layers in one run, so each weight fetch serves them all), then the top-k of each scored
    // row, carrying its log-sum-exp, into cell = its lens residuals row
    const int lensCells = c.layers * tuning_.prefillChunk,
              lensRows = (lensCells + lensBatch - 1) / lensBatch * lensBatch;
    Texture& lensResiduals = t.add("lens residuals", lensRows, c.embedDim);  // [layers * chunk, C]
    lensCopy_ = std::make_unique<Pass>(activationPass(programs_, lensResiduals, x, int(Epilogue::None)));
    LinearDecl lens = rows;
    lens.x = &lensResiduals;
    lensHead_ = std::make_unique<Linear>(plan.linear(lens));
    const int blockColumns = topkBlockColumns(scored.layout().texelsPerRow);
    logSumExp_ = &t.add("scored log-sum-exp", kScoreRows, 1);  // [kScoreRows, 1]
    scoredLse_ = std::make_unique<LogSumExpOp>(
        programs_, *logSumExp_, t.add("scored log-sum-exp blocks", kScoreRows, blockColumns), scored, c.vocabSize);
    // logProbs[r] = scored[r][ids[p + r + 1]] - lse[r]
    logProbs_ = &t.add("token log-probabilities", kScoreRows, 1);  // [kScoreRows, 1]
    tokenLogProb_ = std::make_unique<Pass>(tokenLogProbPass(programs_, *logProbs_, scored, *logSumExp_, *ids_));
    plan.finish();
    // seen = the sequence's tokens (the repetition penalty); the next token = a draw of the sampling
    // asked for, from the logits as penalised (ops/sampler.h): candidates for searches of one
    // candidate, else chosen; ids[next] = its id. The sampler's and the lens's top-k share their
    // block lists (kTopkBlockRows rows)
    Texture& seen = t.add("seen tokens", 1, d.vocabRows);  // [1, V]
    Texture& seenScratch = t.add("seen tokens scratch", 1, d.vocabRows);
    chosen_ = &t.add("chosen token", 1, 4);  // [1, (key, id)]
    const int ranks = topkRanksPerFragment();
    Texture& blocks = t.addInterleaved("top-k blocks", kTopkBlockRows, blockColumns, ranks);
    Texture& heads = t.addInterleaved("top-k block heads", kTopkBlockRows, blockColumns, ranks);
    sampler_ = std::make_unique<SamplerOp>(programs_, *logits_, *ids_, seen, seenScratch, blocks, heads, *candidates_,
                                           *chosen_, c.vocabSize, ranks);
    candidateToken_ = std::make_unique<Pass>(chosenTokenPass(programs_, *ids_, *candidates_));
    chosenToken_ = std::make_unique<Pass>(chosenTokenPass(programs_, *ids_, *chosen_));
    lensCandidates_ = &t.add("lens candidates", kMaxTopk, lensCells * 4);  // [k, layers * chunk (logit, id, lse)]
    lensTopk_ = std::make_unique<TopkOp>(programs_, *lensCandidates_, blocks, heads, scored, seen, c.vocabSize, ranks);
}

int Gpt2Model::topkRanksPerFragment() const {
    int ranks = 1;
    while (ranks < 8 && tuning_.oneDrawWrites(2 * ranks)) ranks *= 2;
    return ranks;
}

// One transformer block for positions [pos0, pos0 + count).
void Gpt2Model::runLayer(int layer, int pos0, int count) {
    Block& b = blocks_[std::size_t(layer)];
    b.qkv.run(pos0, count);
    b.attention.run(pos0, count);
    b.attnOut.run(pos0, count);
    b.mlpUp.run(pos0, count);
    b.mlpDown.run(pos0, count);
}

void Gpt2Model::runBlocks(int blocks, int pos0, int count) {
    for (int l = 0; l < blocks; ++l) runLayer(l, pos0, count);
}

void Gpt2Model::runAttentionScores(int layer, int pos0, int count) {
    blocks_[std::size_t(layer)].qkv.run(pos0, count);
    blocks_[std::size_t(layer)].attention.runScores(pos0, count);
}

bool Gpt2Model::runChunk() {
    if (chunkNext_ >= chunkEnd_) fail("runChunk: no forward in progress (call beginForward)");
    const int pos0 = chunkNext_, count = std::min(tuning_.prefillChunk, chunkEnd_ - pos0);
    const int lensFirst = std::max(pos0, lensFrom_),
              lensCount = capture_.lensTopK > 0 ? std::max(0, pos0 + count - lensFirst) : 0;
    embed_->run(pos0, pos0 + count);
    for (int l = 0; l < config_.layers; ++l) {
        runLayer(l, pos0, count);
        if (capturing()) captureLayer(l, pos0, count, lensFirst, lensCount);
        // A prompt chunk is handed to a browser's GPU process a block at a time, which it can
        // interleave with the page's frames; as one piece it stalls the page (docs/architecture.md, "What the
        // tuning decides, and why").
        if (count > 1) glFlush();
    }
    if (capturing()) {
        scoreLens(lensCount);
        readCaptured(pos0, count, lensFirst, lensCount);
    }
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

void Gpt2Model::rewritingFrom(int pos0) { seenThrough_ = std::min(seenThrough_, pos0 - 1); }

void Gpt2Model::uploadIds(const std::vector<int>& ids, int pos0) {
    checkPositions(ids.size(), pos0);
    rewritingFrom(pos0);
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
    reads_.dropAll();
    uploadIds(ids, pos0);
    startChunks(pos0, pos0 + int(ids.size()));
}

void Gpt2Model::forwardChosenToken(int pos) {
    checkPositions(1, pos);
    if (!lastTokenPass_) fail("forwardChosenToken: no token has been requested");
    rewritingFrom(pos);
    lastTokenPass_->run(pos, pos + 1);
    startChunks(pos, pos + 1);
    runChunk();
}

void Gpt2Model::startChunks(int pos0, int end) {
    dropCaptureReadsFrom(pos0);
    captured_.erase(captured_.lower_bound(pos0), captured_.end());
    chunkNext_ = pos0;
    chunkEnd_ = end;
    lensFrom_ = capture_.lensPositions > 0 ? std::max(pos0, end - capture_.lensPositions) : pos0;
}

std::vector<float> Gpt2Model::logits() {
    requestLogits();
    return takeLogits();
}

std::vector<Gpt2Model::Candidate> Gpt2Model::topCandidates(int k) {
    requestCandidates(k);
    return takeCandidates();
}

void Gpt2Model::requestLogits() {
    if (lastPosition_ < 0) fail("logits: nothing has been run yet");
    reads_.start(ReadQueue::Kind::Logits, *logits_, 1);
}

std::vector<float> Gpt2Model::takeLogits() {
    std::vector<float> values = reads_.take(ReadQueue::Kind::Logits, "takeLogits");
    readbackBytes_ += std::int64_t(values.size()) * 4;
    values.resize(std::size_t(config_.vocabSize));
    return values;
}

void Gpt2Model::requestCandidates(int k) {
    if (lastPosition_ < 0) fail("topCandidates: nothing has been run yet");
    if (k < 1 || k > kMaxCandidates || k > config_.vocabSize)
        fail("topCandidates: k must be in [1, ", std::min(kMaxCandidates, config_.vocabSize), "], got ", k);
    sampler_->topk().run(k);
    lastTokenPass_ = candidateToken_.get();
    reads_.start(ReadQueue::Kind::Candidates, *candidates_, k);
}

void Gpt2Model::requestToken(const TokenSampling& sampling, int draw) {
    if (lastPosition_ < 0) fail("requestToken: nothing has been run yet");
    if (sampling.topK < 0 || sampling.topK > kMaxTopk)
        fail("requestToken: top-k must be in [0, ", kMaxTopk, "], got ", sampling.topK);
    if (sampling.repetitionPenalty != 1.0f && seenThrough_ < lastPosition_) {
        sampler_->markSeen(seenThrough_ + 1, lastPosition_ + 1);
        seenThrough_ = lastPosition_;
    }
    Texture& result = sampler_->run(sampling, draw);
    lastTokenPass_ = &result == chosen_ ? chosenToken_.get() : candidateToken_.get();
    reads_.start(ReadQueue::Kind::Token, result, 1);
}

int Gpt2Model::takeToken() {
    const std::vector<float> row = reads_.take(ReadQueue::Kind::Token, "takeToken");
    readbackBytes_ += 16;
    return int(row[1]);
}

std::vector<Gpt2Model::Candidate> Gpt2Model::takeCandidates() {
    const int k = reads_.oldestRows();
    const std::vector<float> rows = reads_.take(ReadQueue::Kind::Candidates, "takeCandidates");
    readbackBytes_ += std::int64_t(k) * 16;
    std::vector<Candidate> out;
    for (int r = 0; r < k; ++r) out.push_back({int(rows[std::size_t(r) * 4 + 1]), rows[std::size_t(r) * 4]});
    return out;
}

}  // namespace gpt2
