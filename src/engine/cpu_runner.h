#pragma once
// The model on the CPU (src/cpu): the engine's ModelRunner over CpuModel, a few positions per chunk,
// every read ready at once. It draws no tokens itself: the engine draws them from the logits.
#include <map>
#include <optional>

#include "cpu/cpu_model.h"
#include "engine/model_runner.h"
#include "model/tuning.h"

namespace gpt2 {

class CpuRunner final : public ModelRunner {
public:
    // Refuses a model whose plan (CpuModel::plannedBytes, over `files`) is above options.maxGpuBytes
    // or beyond what this build can address (32-bit WebAssembly: 4 GB), with the numbers.
    CpuRunner(const ModelConfig& config, const ModelOptions& options, const std::vector<const ModelFileHeader*>& files);

    const ModelConfig& config() const override { return model_.config(); }
    const char* backend() const override { return "cpu"; }
    const GlCapabilities& capabilities() const override { return capabilities_; }
    std::int64_t bytes() const override { return model_.bytes(); }
    std::int64_t readbackBytes() const override { return 0; }

    bool wants(const std::string& name) const override { return model_.wants(name); }
    void ingest(const ModelFileHeader& file, const StoredTensor& tensor, std::vector<std::uint8_t> bytes) override;
    bool programsLinked() const override { return true; }
    void finishLoad(const std::string& label) override { model_.checkComplete(label); }

    void beginForward(const std::vector<int>& ids, int pos0) override;
    bool runChunk() override;
    bool chunkDone() const override { return true; }

    std::vector<float> logits() override;
    void requestLogits() override;
    bool readReady() const override { return requested_ > 0; }
    std::vector<float> takeLogits() override;
    bool drawsTokens() const override { return false; }
    void requestToken(const TokenSampling& sampling, int draw) override;
    int takeToken() override;
    void forwardChosenToken(int pos) override;

    std::vector<float> tokenLogProbs(const std::vector<int>& ids) override;
    std::vector<std::vector<LensCell>> lens(const std::vector<int>& ids, int k) override;
    std::vector<float> hiddenStates(const std::vector<int>& ids, int layer) override;
    std::vector<float> attention(const std::vector<int>& ids, int layer) override;

    void setInterventions(const InterventionPlan& plan) override { model_.setInterventions(plan); }
    void setCapture(const Capture& capture) override;
    const Capture& capture() const override { return capture_; }
    void endCapture() override;
    std::vector<CapturedPosition> takeCaptured(int end) override;

private:
    // Positions per chunk: each weight is decoded once for all of them, and a chunk is what an
    // abort or another call in a browser waits for. 64 for GPT-2 124M (fewer left its prompts'
    // products decoding weights more than multiplying them), fewer for wider models, whose positions
    // cost more: about as long a wait for every size.
    int chunkPositions() const;
    // The live views' capture of position `pos`, made on first use.
    CapturedPosition& captured(int pos);
    // The last row of a run's residual stream.
    std::vector<float> lastRow(const std::vector<float>& rows) const;
    // The k most likely tokens of the logits, best first (ties: the smaller id first), with their
    // probabilities.
    static LensCell topTokens(const std::vector<float>& logits, int k);

    CpuModel model_;
    GlCapabilities capabilities_;
    std::vector<int> ids_;  // of the forward under way, from position pos0_
    int pos0_ = 0, next_ = 0;
    std::optional<std::vector<float>> logits_;  // of the last position run
    int requested_ = 0;                         // reads of the logits requested and not taken
    Capture capture_;
    int lensFrom_ = 0;  // the first position of the forward under way with a lens
    std::map<int, CapturedPosition> captured_;
};

}  // namespace gpt2
