#include "engine/gpu_runner.h"

#include "model/weight_ingest.h"

namespace gpt2 {
namespace {
// Makes `readouts` at the site a model hands over while it declares its graph. Should the model be
// refused after that, they are never used, and destroying them does not touch the model.
DeclareReadouts declareInto(std::unique_ptr<Readouts>& readouts) {
    return [&readouts](const ReadoutSite& site) { readouts = std::make_unique<Readouts>(site); };
}
}  // namespace

GpuRunner::GpuRunner(const ModelConfig& config, const ModelOptions& options, const BlockFormats& blocks) {
    // In the body: the model's constructor makes the readouts, whose member must exist by then.
    model_ = std::make_unique<Gpt2Model>(config, options, blocks, declareInto(readouts_));
}

std::int64_t GpuRunner::plannedBytes(const ModelConfig& config, const ModelOptions& options,
                                     const BlockFormats& blocks) {
    std::unique_ptr<Readouts> readouts;
    return Gpt2Model::plannedGpuBytes(config, options, blocks, declareInto(readouts));
}

void GpuRunner::ingest(const ModelFileHeader& file, const StoredTensor& tensor, std::vector<std::uint8_t> bytes) {
    gpt2::ingest(model_->weights(), file, tensor, bytes.data());
}

void GpuRunner::finishLoad(const std::string& label) {
    model_->weights().checkComplete(label);
    model_->finishPrograms();
}

void GpuRunner::forwardChosenToken(int pos) {
    readouts_->next().writeChosenId(pos);
    model_->forwardWrittenToken(pos);
}

}  // namespace gpt2
