#pragma once
// What the engine asks of a loaded model, whatever runs it: the GPU's passes (GpuRunner) or the
// CPU's kernels (CpuRunner). Positions are absolute: the K/V cache rows below a forward's first
// position must hold the same sequence's earlier tokens. Weights arrive through ingest() from the one
// stored-tensor list (format/model_file.h) on every backend.
#include <cstdint>
#include <string>
#include <vector>

#include "format/model_file.h"
#include "gl/capabilities.h"
#include "model/interventions.h"
#include "model/ops/sampler.h"
#include "model/readouts/live_capture.h"

namespace gpt2 {

class ModelRunner {
public:
    virtual ~ModelRunner() = default;

    virtual const ModelConfig& config() const = 0;
    // "webgl" or "cpu", and what runs it: the GL renderer and its limits, or the CPU.
    virtual const char* backend() const = 0;
    virtual const GlCapabilities& capabilities() const = 0;
    // Bytes of the model's memory: its weights, activations, caches and readouts.
    virtual std::int64_t bytes() const = 0;
    // Bytes read back from a GPU so far (0 on the CPU).
    virtual std::int64_t readbackBytes() const = 0;

    // Loading: whether `name` (GPT-2's Hugging Face name) is a weight the model reads; one tensor of
    // `file` from its bytes as stored (which the CPU keeps as they are, without a copy); whether the programs are
    // linked (the CPU has none); then finishLoad checks that every weight arrived (and the programs), naming `label`.
    virtual bool wants(const std::string& name) const = 0;
    virtual void ingest(const ModelFileHeader& file, const StoredTensor& tensor, std::vector<std::uint8_t> bytes) = 0;
    virtual bool programsLinked() const = 0;
    virtual void finishLoad(const std::string& label) = 0;

    // A forward a chunk at a time: beginForward checks and takes the ids of positions [pos0, pos0 +
    // ids.size()); each runChunk() runs the next chunk and returns true once the last one (with the
    // last position's logits) has run; chunkDone() says whether a caller that must not wait may run
    // the next one.
    virtual void beginForward(const std::vector<int>& ids, int pos0) = 0;
    virtual bool runChunk() = 0;
    virtual bool chunkDone() const = 0;

    // The last position's logits, waiting where need be.
    virtual std::vector<float> logits() = 0;
    // Reads of the next token that a caller polls (NextToken's contract): requestLogits() starts
    // one, readReady() says whether the oldest has arrived, takeLogits() takes it.
    virtual void requestLogits() = 0;
    virtual bool readReady() const = 0;
    virtual std::vector<float> takeLogits() = 0;
    // Whether the model draws tokens itself (requestToken, takeToken: NextToken's) and can run the
    // next position over a drawn token before it is read (forwardChosenToken); where not, the engine
    // draws every token from the logits.
    virtual bool drawsTokens() const = 0;
    virtual void requestToken(const TokenSampling& sampling, int draw) = 0;
    virtual int takeToken() = 0;
    virtual void forwardChosenToken(int pos) = 0;

    // Readouts, each running `ids` from position 0 as a new sequence: log p(ids[t + 1] | ids[..t]);
    // the logit lens ([layer][position], k per cell); the residual stream after block `layer` (T x
    // n_embd); `layer`'s attention probabilities (heads x T x T).
    virtual std::vector<float> tokenLogProbs(const std::vector<int>& ids) = 0;
    virtual std::vector<std::vector<LensCell>> lens(const std::vector<int>& ids, int k) = 0;
    virtual std::vector<float> hiddenStates(const std::vector<int>& ids, int layer) = 0;
    virtual std::vector<float> attention(const std::vector<int>& ids, int layer) = 0;

    // What every forward from now on does inside the blocks (model/interventions.h).
    virtual void setInterventions(const InterventionPlan& plan) = 0;

    // Live views (LiveCapture's contract): captured by every forward from set() until end(), taken
    // by position.
    virtual void setCapture(const Capture& capture) = 0;
    virtual const Capture& capture() const = 0;
    virtual void endCapture() = 0;
    virtual std::vector<CapturedPosition> takeCaptured(int end) = 0;
};

}  // namespace gpt2
