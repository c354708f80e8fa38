#include "model/gpt2_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.h"

namespace gpt2 {

TexelFormat weightFormatNamed(const std::string& name) {
    if (name == "fp16") return TexelFormat::Float16;
    if (name == "fp32") return TexelFormat::Float32;
    fail("weights must be fp16 or fp32, got \"", name, "\"");
}

namespace {
GlCapabilities capabilitiesFor(const ModelOptions& options) {
    GlCapabilities caps = queryCapabilities(options.maxTextureSize);
    if (options.pagedRows >= 0) caps.limits.pagedRows = options.pagedRows != 0;
    return caps;
}

TexelFormat weightFormat(const ModelOptions& options, const GlCapabilities& caps) {
    if (options.weights != TexelFormat::Float16) return options.weights;
    // Row pairs halve the weight fetches: an H200 decoded 124M in 3.9 instead of 4.6 ms, SwiftShader
    // about as fast either way.
    const bool pairs = options.halfPairs >= 0 ? options.halfPairs != 0 : !caps.slowHalfUnpacking;
    return pairs ? TexelFormat::HalfPairs : TexelFormat::Float16;
}
}  // namespace

Gpt2Model::Gpt2Model(const ModelConfig& config, const ModelOptions& options)
    : config_(config),
      caps_(capabilitiesFor(options)),
      weights_(config, weightFormat(options, caps_), caps_.limits),
      prefillChunk_(std::min(options.prefillChunk, config.contextLength)),
      forcedLineWidth_(options.activationLineWidth),
      splitTexels_(options.splitTexels >= 0                         ? options.splitTexels
                   : caps_.softwareRenderer || !caps_.floatBlend ? 0
                                                                 : kGpuSplitTexels) {
    if (splitTexels_ > 0 && !caps_.floatBlend)
        fail("splitTexels ", splitTexels_, " needs EXT_float_blend, which this GPU/browser lacks (renderer: ",
             caps_.renderer, "); use 0");
    if (options.prefillChunk < 1) fail("prefillChunk must be at least 1, got ", options.prefillChunk);
    const ModelConfig& c = config_;
    const EngineDims d = engineDims(c);
    const int positions = c.contextLength, headsCols = d.headsTexels * 4;
    shape_ = {c.heads, d.headTexels};

    ids_ = activation(positions, 1, "token ids");
    x_[0] = activation(positions, c.embedDim, "residual A");
    x_[1] = activation(positions, c.embedDim, "residual B");
    // LayerNorm outputs are read by the next matmul of the same chunk only: rows relative to the chunk.
    normed_ = activation(prefillChunk_, c.embedDim, "layernorm output");
    moments_ = activation(positions, 4, "layernorm moments");  // rows as the residual stream's
    q_ = activation(positions, headsCols, "queries");
    scores_ = activation(prefillChunk_ * c.heads, positions, "attention scores");
    attended_ = activation(positions, headsCols, "attention output");
    hidden_ = activation(positions, c.innerDim, "mlp hidden");
    logits_ = activation(1, d.vocabRows, "logits");
    // Blocks of about sqrt(texels) texels balance the two top-k levels.
    const int logitTexels = d.vocabRows / 4;
    const int blockTexels = int(std::ceil(std::sqrt(double(logitTexels))));
    topkBlocks_ = activation(1, 4 * ((logitTexels + blockTexels - 1) / blockTexels), "top-k block winners");
    candidates_ = activation(kMaxCandidates, 4, "top-k candidates");

    // Split-K only where output rows are whole lines (Pass instances).
    auto split = [&](const Texture& out) { return out.layout().rowsAreWholeLines() ? splitTexels_ : 0; };
    // LayerNorms of the residual stream into normed_; their row moments in a pass of their own where
    // matmuls split (GPUs).
    auto layerNorm = [&](const Texture& x, const std::string& prefix) {
        return LayerNormOp(programs_, *normed_, x, weights_[prefix + "weight"], weights_[prefix + "bias"], c.embedDim,
                           c.layerNormEpsilon, moments_.get(), split(*moments_));
    };
    const Texture& wte = weights_["wte.weight"];
    head_.push_back(embeddingPass(programs_, *x_[0], *ids_, wte, weights_["wpe.weight"]));
    for (int l = 0; l < c.layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        LayerNormOp ln1 = layerNorm(*x_[0], h + "ln_1."), ln2 = layerNorm(*x_[1], h + "ln_2.");
        auto kCache = activation(positions, headsCols, (h + "k cache").c_str());
        auto vCache = activation(positions, headsCols, (h + "v cache").c_str());
        float scale = c.scaleAttentionWeights ? 1.0f / std::sqrt(float(c.headDim())) : 1.0f;
        if (c.scaleAttentionByInverseLayer) scale /= float(l + 1);

        MatmulSpec qkv{normed_.get(), &weights_[h + "attn.c_attn.weight"], &weights_[h + "attn.c_attn.bias"]};
        qkv.splitTexels = split(*q_);
        MatmulSpec proj{attended_.get(), &weights_[h + "attn.c_proj.weight"]};
        proj.bias = &weights_[h + "attn.c_proj.bias"];
        proj.residual = x_[0].get();
        proj.splitTexels = split(*x_[1]);
        MatmulSpec fc{normed_.get(), &weights_[h + "mlp.c_fc.weight"], &weights_[h + "mlp.c_fc.bias"]};
        fc.splitTexels = split(*hidden_);
        MatmulSpec mlpProj{hidden_.get(), &weights_[h + "mlp.c_proj.weight"]};
        mlpProj.bias = &weights_[h + "mlp.c_proj.bias"];
        mlpProj.residual = x_[1].get();
        mlpProj.splitTexels = split(*x_[0]);
        // A split c_fc stores sums before the activation; the projection activates them on fetch.
        (fc.splitTexels > 0 ? mlpProj.inputActivation : fc.activation) = activationEpilogue(c.activation);

        Matmul qkvPasses = matmul({q_.get(), kCache.get(), vCache.get()}, qkv, &ln1);
        Matmul fcPasses = matmul({hidden_.get()}, fc, &ln2);
        Pass scores = attentionScoresPass(programs_, *scores_, *q_, *kCache, shape_, scale);
        Pass apply = attentionApplyPass(programs_, *attended_, *scores_, *vCache, shape_);
        layers_.push_back(Layer{std::move(ln1), std::move(ln2), std::move(kCache), std::move(vCache),
                                std::move(qkvPasses), matmul({x_[1].get()}, proj, nullptr), std::move(fcPasses),
                                matmul({x_[0].get()}, mlpProj, nullptr), std::move(scores), std::move(apply)});
    }
    finalNorm_.emplace(layerNorm(*x_[0], "ln_f."));
    MatmulSpec lmHead{normed_.get(), c.tieWordEmbeddings ? &wte : &weights_["lm_head.weight"]};
    lmHead.transposedWeight = true;
    lmHead.splitTexels = split(*logits_);
    // Only the last position's logits are ever needed: one row.
    lmHead_ = matmul({logits_.get()}, lmHead, &*finalNorm_, false);
    head_.push_back(topkBlockPass(programs_, *topkBlocks_, *logits_, *candidates_, c.vocabSize, blockTexels));
    head_.push_back(topkSelectPass(programs_, *candidates_, *topkBlocks_));
    head_.push_back(topCandidateTokenPass(programs_, *ids_, *candidates_));
}

Gpt2Model::Matmul Gpt2Model::matmul(std::vector<Texture*> outputs, const MatmulSpec& spec, const LayerNormOp* layerNorm,
                                    bool manyRows) {
    Matmul m;
    // A split tuned wider than the vertex shader can hand over runs decode steps through `rows`.
    if (canTakeInputFromVertex(spec)) {
        MatmulSpec row = spec;
        row.inputFromVertex = true;
        if (layerNorm && layerNorm->hasMoments()) {
            row.x = &layerNorm->input();
            row.inputLayerNorm = layerNorm->inputLayerNorm();
        }
        m.row.emplace(matmulPass(programs_, outputs, row));
    }
    if (manyRows || !m.row) m.rows.emplace(matmulPass(programs_, outputs, spec));
    return m;
}

std::unique_ptr<Texture> Gpt2Model::activation(int rows, int cols, const char* name) {
    const int lineWidth = activationLineWidth(rows, (cols + 3) / 4);
    return std::make_unique<Texture>(TensorLayout::make(rows, cols, caps_.limits, name, lineWidth), TexelFormat::Float32, name);
}

int Gpt2Model::activationLineWidth(int rows, int texels) const {
    if (forcedLineWidth_ >= 0) return forcedLineWidth_;
    if (rows == 1) return kActivationLineWidth;
    for (int width = kActivationLineWidth; width >= 8; width /= 2)
        if (texels % width == 0) return width;
    return caps_.softwareRenderer ? kActivationLineWidth : 0;
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

// LN1, Q/K/V (filling the cache rows) and the scores of queries [pos0, pos0 + count).
void Gpt2Model::runScores(Layer& layer, int pos0, int count) {
    runNormalized(layer.ln1, layer.qkv, pos0, pos0, count);
    setAttentionPosition(layer.scores, pos0);
    layer.scores.run(0, count * config_.heads);
}

void Gpt2Model::runLayer(Layer& layer, int pos0, int count) {
    runScores(layer, pos0, count);
    setAttentionPosition(layer.apply, pos0);
    layer.apply.run(pos0, pos0 + count);
    passFor(layer.proj, count).run(pos0, pos0 + count);
    runNormalized(layer.ln2, layer.fc, pos0, pos0, count);
    passFor(layer.mlpProj, count).run(pos0, pos0 + count);
}

Pass& Gpt2Model::passFor(Matmul& m, int count) {
    if (count == 1 && m.row) return *m.row;
    if (!m.rows) fail("forward: a matmul declared for one row only was asked for ", count, " rows");
    return *m.rows;
}

void Gpt2Model::runNormalized(LayerNormOp& layerNorm, Matmul& m, int outRow, int inRow, int count) {
    Pass& pass = passFor(m, count);
    if (m.row && &pass == &*m.row && layerNorm.hasMoments()) {
        // Folded: the pass normalises its input row of x from the moments.
        layerNorm.runMoments(inRow, inRow + 1);
        setInputRowOffset(pass, inRow - outRow);
    } else {
        // The LayerNorm writes the chunk's rows of normed_, which the pass reads.
        layerNorm.run(0, count, inRow);
        setInputRowOffset(pass, -outRow);
    }
    pass.run(outRow, outRow + count);
}

void Gpt2Model::forward(const std::vector<int>& ids, int pos0) {
    beginForward(ids, pos0);
    while (!runChunk()) {
    }
}

void Gpt2Model::beginForward(const std::vector<int>& ids, int pos0) {
    chunkNext_ = chunkEnd_ = 0;
    for (PendingRead& r : reads_) r.read.drop();
    readsInFlight_ = 0;
    checkPositions(ids.size(), pos0);
    std::vector<float> idValues(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0 || ids[i] >= config_.vocabSize)
            fail("token id ", ids[i], " at position ", pos0 + int(i), " is outside the vocabulary [0, ", config_.vocabSize, ")");
        idValues[i] = float(ids[i]);
    }
    ids_->uploadRows(pos0, int(ids.size()), idValues.data());
    chunkNext_ = pos0;
    chunkEnd_ = pos0 + int(ids.size());
}

bool Gpt2Model::runChunk() {
    if (chunkNext_ >= chunkEnd_) fail("runChunk: no forward in progress (call beginForward)");
    const int start = chunkNext_, n = std::min(prefillChunk_, chunkEnd_ - start);
    head_[kEmbedding].run(start, start + n);
    // A flush per layer of a prompt chunk hands a browser's GPU process the chunk in pieces it can
    // interleave with the page's own frames; one flush per chunk stalls the page while it runs
    // (docs/benchmarks.md). A decode step is short enough as one piece.
    for (Layer& layer : layers_) {
        runLayer(layer, start, n);
        if (n > 1) glFlush();
    }
    chunkNext_ = start + n;
    if (chunkNext_ < chunkEnd_) {
        chunkFence_ = GlFence::insert();
        return false;
    }
    // Only the last position's logits are needed: the final LayerNorm and lm_head run for one row.
    runNormalized(*finalNorm_, lmHead_, 0, chunkEnd_ - 1, 1);
    lastPosition_ = chunkEnd_ - 1;
    chunkFence_.reset();
    return true;
}

std::vector<float> Gpt2Model::logits() {
    requestLogits();
    return takeLogits();
}

std::vector<Gpt2Model::Candidate> Gpt2Model::topCandidates(int k) {
    requestCandidates(k);
    return takeCandidates();
}

void Gpt2Model::forwardTopCandidate(int pos) {
    checkPositions(1, pos);
    head_[kTopCandidateToken].run(pos, pos + 1);
    chunkNext_ = pos;
    chunkEnd_ = pos + 1;
    runChunk();
}

Gpt2Model::PendingRead& Gpt2Model::startRead(Reading what, int count) {
    if (readsInFlight_ == kMaxReads) fail("at most ", kMaxReads, " reads may be in flight; take one first");
    PendingRead& r = reads_[(firstRead_ + readsInFlight_) % kMaxReads];
    r.what = what;
    r.count = count;
    ++readsInFlight_;
    return r;
}

std::vector<float> Gpt2Model::finishRead(Reading what, const char* caller) {
    PendingRead& r = reads_[firstRead_];
    if (readsInFlight_ == 0 || r.what != what)
        fail(caller, ": the oldest read in flight is not of that kind (request it first, and take reads in order)");
    firstRead_ = (firstRead_ + 1) % kMaxReads;
    --readsInFlight_;
    return r.read.take();
}

bool Gpt2Model::readReady() const { return readsInFlight_ > 0 && reads_[firstRead_].read.ready(); }

void Gpt2Model::requestLogits() {
    if (lastPosition_ < 0) fail("logits: nothing has been run yet");
    startRead(Reading::Logits, 0).read.start(*logits_, 0, 1);
}

std::vector<float> Gpt2Model::takeLogits() {
    std::vector<float> values = finishRead(Reading::Logits, "takeLogits");
    readbackBytes_ += std::int64_t(values.size()) * 4;
    values.resize(std::size_t(config_.vocabSize));
    return values;
}

void Gpt2Model::requestCandidates(int k) {
    if (lastPosition_ < 0) fail("topCandidates: nothing has been run yet");
    if (k < 1 || k > kMaxCandidates || k > config_.vocabSize)
        fail("topCandidates: k must be in [1, ", std::min(kMaxCandidates, config_.vocabSize), "], got ", k);
    for (int rank = 0; rank < k; ++rank) {
        head_[kTopkBlock].set("u_rank", rank).run(0, 1);
        head_[kTopkSelect].run(rank, rank + 1);
    }
    startRead(Reading::Candidates, k).read.start(*candidates_, 0, k);
}

std::vector<Gpt2Model::Candidate> Gpt2Model::takeCandidates() {
    const int k = reads_[firstRead_].count;
    const std::vector<float> rows = finishRead(Reading::Candidates, "takeCandidates");
    readbackBytes_ += std::int64_t(k) * 16;
    std::vector<Candidate> out;
    for (int r = 0; r < k; ++r) out.push_back({int(rows[std::size_t(r) * 4 + 1]), rows[std::size_t(r) * 4]});
    return out;
}

std::vector<float> Gpt2Model::attention(const std::vector<int>& ids, int layer) {
    checkPositions(ids.size(), 0);
    if (layer < 0 || layer >= config_.layers) fail("attention: layer ", layer, " outside [0, ", config_.layers, ")");
    const int count = int(ids.size()), heads = config_.heads;
    chunkNext_ = chunkEnd_ = 0;  // a forward in progress cannot go on over the rewritten id rows
    std::vector<float> idValues(ids.begin(), ids.end());
    ids_->uploadRows(0, count, idValues.data());
    // Rows are (query, head); a chunk's scores become its rows of the probabilities.
    Texture probs(TensorLayout::make(count * heads, count, caps_.limits, "attention probabilities"), TexelFormat::Float32,
                  "attention probabilities");
    Pass probsPass = attentionProbsPass(programs_, probs, *scores_, shape_);
    for (int start = 0; start < count; start += prefillChunk_) {
        const int n = std::min(prefillChunk_, count - start);
        head_[kEmbedding].run(start, start + n);
        for (int l = 0; l < layer; ++l) runLayer(layers_[std::size_t(l)], start, n);
        runScores(layers_[std::size_t(layer)], start, n);
        setAttentionPosition(probsPass, start);
        probsPass.run(start * heads, (start + n) * heads);
    }
    const std::vector<float> rows = probs.readRows(0, count * heads);
    readbackBytes_ += std::int64_t(rows.size()) * 4;
    std::vector<float> out(rows.size());  // heads x T x T
    for (int q = 0; q < count; ++q)
        for (int h = 0; h < heads; ++h)
            std::copy_n(rows.begin() + (std::int64_t(q) * heads + h) * count, count, out.begin() + (std::int64_t(h) * count + q) * count);
    return out;
}

std::int64_t Gpt2Model::gpuBytes() const {
    std::int64_t total = weights_.bytes();
    for (const auto* t : {&ids_, &x_[0], &x_[1], &normed_, &moments_, &q_, &scores_, &attended_, &hidden_, &logits_, &topkBlocks_, &candidates_})
        total += (*t)->bytes();
    for (const Layer& layer : layers_) total += layer.kCache->bytes() + layer.vCache->bytes();
    return total;
}

}  // namespace gpt2
