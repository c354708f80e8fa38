#pragma once
// GPT-2 on the CPU, for machines where no GPU runs the engine: the same forward (picoGPT's), over
// weights kept in memory as their files store them (StoredMatrix: 4-bit blocks stay 4-bit), with fp32
// activations and an fp32 (or fp16) K/V cache at absolute positions, as the GPU path keeps them. Tensors
// arrive one at a time from the one ingest list (format/model_file.h), as they do for the GPU.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cpu/kv_cache.h"
#include "cpu/stored_matrix.h"
#include "format/model_file.h"
#include "model/engine_matrices.h"
#include "model/interventions.h"

namespace gpt2 {

class CpuModel {
public:
    // `halfCache`: keys and values kept as fp16 (kvCache: 'fp16').
    explicit CpuModel(const ModelConfig& config, bool halfCache = false);
    // Loads every weight of a model on disk.
    explicit CpuModel(const ModelOnDisk& model, bool halfCache = false);

    const ModelConfig& config() const { return config_; }
    // Whether `name` (GPT-2's Hugging Face name) is a weight the forward reads.
    bool wants(const std::string& name) const;
    // Takes `tensor` of `file` from its bytes as stored, after checking it against the config.
    void ingest(const ModelFileHeader& file, const StoredTensor& tensor, std::vector<std::uint8_t> bytes);
    // Throws naming the weights that never arrived.
    void checkComplete(const std::string& label) const;
    // Bytes of the weights as stored, and of the K/V cache at the full context (what it may grow to).
    std::int64_t bytes() const;
    // The bytes such a model takes at its full context, its weights as `files` store them (a weight
    // in none of them: as the config's dtype says, else fp32, as GPT-2's published checkpoints are),
    // before any tensor arrives.
    static std::int64_t plannedBytes(const ModelConfig& config, bool halfCache,
                                     const std::vector<const ModelFileHeader*>& files = {});

    // Runs tokens `ids` at positions [pos0, pos0 + ids.size()) and returns the last one's logits. The
    // cache rows < pos0 must hold the earlier tokens of the same sequence.
    std::vector<float> forward(const std::vector<int>& ids, int pos0);

    // Throws unless `ids` can run at positions [pos0, pos0 + ids.size()): within the context and the
    // vocabulary.
    void checkPositions(const std::vector<int>& ids, int pos0) const;
    // What each position shows as it runs: its residual stream after each block, and each block's
    // attention probabilities (heads x (pos + 1), head by head).
    struct Observer {
        std::function<void(int layer, int pos, const std::vector<float>& x)> afterBlock;
        std::function<void(int layer, int pos, const std::vector<float>& probs)> attention;
    };
    // Runs positions [pos0, pos0 + ids.size()) over `ids` (checked by checkPositions) through every
    // block together, each weight decoded once for all of them, their keys and values into the cache:
    // the residual stream after the last block, a row of n_embd per position.
    std::vector<float> runPositions(const std::vector<int>& ids, int pos0, const Observer& observer = {});
    // lm_head(ln_f(x)) of a residual stream row: the logits.
    std::vector<float> head(const std::vector<float>& x) const;
    // What every forward from now on does inside the blocks (model/interventions.h).
    void setInterventions(const InterventionPlan& plan) { interventions_ = plan; }

private:
    const StoredMatrix& matrix(const std::string& name) const;
    const std::vector<float>& vec(const std::string& name) const;
    // A block's steering and patches, on the residual stream after it (rows of positions [pos0, pos0 + n)).
    void intervene(const BlockInterventions& hooks, std::vector<float>& x, int pos0, int n) const;

    ModelConfig config_;
    std::vector<MatrixSpec> specs_;
    std::map<std::string, StoredMatrix> matrices_;
    std::map<std::string, std::vector<float>> vectors_;
    cpu::KvCache cache_;
    InterventionPlan interventions_;
};

}  // namespace gpt2
