#pragma once
// The model on the GPU: Gpt2Model's passes and the readouts owned beside it (model/readouts/).
// Needs a current GL context.
#include <memory>

#include "engine/model_runner.h"
#include "model/gpt2_model.h"
#include "model/readouts/readouts.h"

namespace gpt2 {

class GpuRunner final : public ModelRunner {
public:
    // Weights named in `blocks` arrive as blocks (model/weight_ingest.h).
    GpuRunner(const ModelConfig& config, const ModelOptions& options, const BlockFormats& blocks);
    // The GPU bytes such a model and its readouts would take on the current context, planned
    // without allocating or compiling anything.
    static std::int64_t plannedBytes(const ModelConfig& config, const ModelOptions& options,
                                     const BlockFormats& blocks);
    // The weight textures, as the matmuls read them; the readouts.
    ModelWeights& weights() { return model_->weights(); }
    Readouts& readouts() { return *readouts_; }
    // The programs of the model and its readouts (Gpt2Model::programCache).
    const ProgramCache& programs() const { return model_->programCache(); }

    const ModelConfig& config() const override { return model_->config(); }
    const char* backend() const override { return "webgl"; }
    const GlCapabilities& capabilities() const override { return model_->capabilities(); }
    std::int64_t bytes() const override { return model_->gpuBytes() + readouts_->gpuBytes(); }
    std::int64_t readbackBytes() const override { return model_->readbackBytes(); }

    bool wants(const std::string& name) const override { return model_->weights().wants(name); }
    void ingest(const ModelFileHeader& file, const StoredTensor& tensor, std::vector<std::uint8_t> bytes) override;
    bool programsLinked() const override { return model_->programsLinked(); }
    void finishLoad(const std::string& label) override;

    void beginForward(const std::vector<int>& ids, int pos0) override { model_->beginForward(ids, pos0); }
    bool runChunk() override { return model_->runChunk(); }
    bool chunkDone() const override { return model_->chunkDone(); }

    std::vector<float> logits() override { return readouts_->next().logits(); }
    void requestLogits() override { readouts_->next().requestLogits(); }
    bool readReady() const override { return readouts_->next().readReady(); }
    std::vector<float> takeLogits() override { return readouts_->next().takeLogits(); }
    bool drawsTokens() const override { return true; }
    void requestToken(const TokenSampling& sampling, int draw) override {
        readouts_->next().requestToken(sampling, draw);
    }
    int takeToken() override { return readouts_->next().takeToken(); }
    void forwardChosenToken(int pos) override;

    std::vector<float> tokenLogProbs(const std::vector<int>& ids) override {
        return readouts_->tokenLogProbs().run(ids);
    }
    std::vector<std::vector<LensCell>> lens(const std::vector<int>& ids, int k) override {
        return offlineLens(*model_, readouts_->live(), ids, k);
    }
    std::vector<float> hiddenStates(const std::vector<int>& ids, int layer) override {
        return readouts_->hiddenStates().run(ids, layer);
    }
    std::vector<float> attention(const std::vector<int>& ids, int layer) override {
        return readouts_->attention().run(ids, layer);
    }

    void setInterventions(const InterventionPlan& plan) override { model_->setInterventions(plan); }
    void setCapture(const Capture& capture) override { readouts_->live().set(capture); }
    const Capture& capture() const override { return readouts_->live().capture(); }
    void endCapture() override { readouts_->live().end(); }
    std::vector<CapturedPosition> takeCaptured(int end) override { return readouts_->live().take(end); }

private:
    // The readouts hold the model's view: destroyed before it.
    std::unique_ptr<Gpt2Model> model_;
    std::unique_ptr<Readouts> readouts_;
};

}  // namespace gpt2
