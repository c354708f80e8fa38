#include "engine/cpu_runner.h"

#include <algorithm>
#include <cmath>

#include "cpu/cpu_target.h"
#include "model/ops/topk.h"
#include "model/readouts/lens.h"
#include "model/readouts/readout_checks.h"
#include "util/error.h"

namespace gpt2 {

CpuRunner::CpuRunner(const ModelConfig& config, const ModelOptions& options,
                     const std::vector<const ModelFileHeader*>& files)
    : model_(config, options.kvCache == TexelFormat::Float16) {
    const std::int64_t planned = CpuModel::plannedBytes(config, options.kvCache == TexelFormat::Float16, files);
    const auto refuseAbove = [&](std::int64_t limit, const std::string& what) {
        if (limit > 0 && planned > limit)
            fail("this model would take ", megabytes(planned), " of memory on the CPU backend at its full context, ",
                 "more than ", what, "; try a 4-bit GGUF file or a smaller model");
    };
    // What a pointer reaches, less room for the module itself, the tokenizer and one tensor in transit.
    const std::int64_t addressable = sizeof(void*) == 4 ? (std::int64_t(1) << 32) - (std::int64_t(512) << 20) : 0;
    refuseAbove(addressable, "32-bit WebAssembly addresses (" + megabytes(addressable) + " for the model)");
    refuseAbove(std::int64_t(options.maxGpuBytes), "maxGpuBytes " + megabytes(std::int64_t(options.maxGpuBytes)));
    capabilities_.renderer = cpu::targetDescription();
    capabilities_.version = "none: no GL";
}

void CpuRunner::ingest(const ModelFileHeader& file, const StoredTensor& tensor, std::vector<std::uint8_t> bytes) {
    model_.ingest(file, tensor, std::move(bytes));
}

void CpuRunner::beginForward(const std::vector<int>& ids, int pos0) {
    model_.checkPositions(ids, pos0);
    ids_ = ids;
    pos0_ = next_ = pos0;
    logits_.reset();
    requested_ = 0;
    // The positions from pos0 on run again: what was captured there goes.
    captured_.erase(captured_.lower_bound(pos0), captured_.end());
    const int end = pos0 + int(ids.size());
    lensFrom_ = capture_.lensPositions > 0 ? std::max(pos0, end - capture_.lensPositions) : pos0;
}

int CpuRunner::chunkPositions() const {
    const double width = config().embedDim / 768.0;
    return std::clamp(int(64 / (width * width)), 8, 64);
}

bool CpuRunner::runChunk() {
    const int end = pos0_ + int(ids_.size());
    if (next_ >= end) fail("runChunk: no forward in progress (call beginForward)");
    const int count = std::min(chunkPositions(), end - next_);
    const std::vector<int> chunk(ids_.begin() + (next_ - pos0_), ids_.begin() + (next_ - pos0_ + count));
    CpuModel::Observer observer;
    if (capture_.lensTopK > 0)
        observer.afterBlock = [&](int, int pos, const std::vector<float>& x) {
            if (pos >= lensFrom_) captured(pos).lens.push_back(topTokens(model_.head(x), capture_.lensTopK));
        };
    if (capture_.attentionLayer >= 0)
        observer.attention = [&](int layer, int pos, const std::vector<float>& probs) {
            if (layer == capture_.attentionLayer) captured(pos).attention = probs;
        };
    const std::vector<float> x = model_.runPositions(chunk, next_, observer);
    next_ += count;
    if (next_ < end) return false;
    logits_ = model_.head(lastRow(x));
    return true;
}

CapturedPosition& CpuRunner::captured(int pos) {
    CapturedPosition& c = captured_[pos];
    c.position = pos;
    return c;
}

std::vector<float> CpuRunner::lastRow(const std::vector<float>& rows) const {
    return std::vector<float>(rows.end() - config().embedDim, rows.end());
}

std::vector<float> CpuRunner::logits() {
    if (!logits_) fail("logits: no forward has run since the sequence began");
    return *logits_;
}

void CpuRunner::requestLogits() {
    logits();
    ++requested_;
}

std::vector<float> CpuRunner::takeLogits() {
    if (requested_ == 0) fail("takeLogits: no read was requested");
    --requested_;
    return logits();
}

namespace {
// drawsTokens() is false: the engine never asks for these.
[[noreturn]] void drawsNoTokens() { fail("the CPU backend draws no tokens: the engine draws them from the logits"); }
}  // namespace

void CpuRunner::requestToken(const TokenSampling&, int) { drawsNoTokens(); }

int CpuRunner::takeToken() { drawsNoTokens(); }

void CpuRunner::forwardChosenToken(int) { drawsNoTokens(); }

std::vector<float> CpuRunner::tokenLogProbs(const std::vector<int>& ids) {
    checkTokenLogProbsIds(ids);
    model_.checkPositions(ids, 0);
    // Every position but the last, which has no next token.
    const std::vector<float> x = model_.runPositions(std::vector<int>(ids.begin(), ids.end() - 1), 0);
    const std::size_t C = std::size_t(config().embedDim);
    std::vector<float> out;
    for (std::size_t t = 0; t + 1 < ids.size(); ++t) {
        const std::vector<float> logits = model_.head(std::vector<float>(x.begin() + t * C, x.begin() + (t + 1) * C));
        const float largest = *std::max_element(logits.begin(), logits.end());
        double sum = 0;
        for (const float logit : logits) sum += std::exp(double(logit) - largest);
        out.push_back(float(double(logits[std::size_t(ids[t + 1])]) - largest - std::log(sum)));
    }
    logits_.reset();
    return out;
}

std::vector<std::vector<LensCell>> CpuRunner::lens(const std::vector<int>& ids, int k) {
    k = checkLensTopK(k, Lens::kDefaultTopK, std::min(kMaxTopk, config().vocabSize));
    model_.checkPositions(ids, 0);
    std::vector<std::vector<LensCell>> out(std::size_t(config().layers));
    CpuModel::Observer observer;
    observer.afterBlock = [&](int layer, int, const std::vector<float>& x) {
        out[std::size_t(layer)].push_back(topTokens(model_.head(x), k));
    };
    // It ends as a forward does: the last position's logits are ready.
    logits_ = model_.head(lastRow(model_.runPositions(ids, 0, observer)));
    return out;
}

std::vector<float> CpuRunner::hiddenStates(const std::vector<int>& ids, int layer) {
    checkReadoutLayer("hiddenStates", layer, config().layers);
    model_.checkPositions(ids, 0);
    std::vector<float> out;
    CpuModel::Observer observer;
    observer.afterBlock = [&](int l, int, const std::vector<float>& x) {
        if (l == layer) out.insert(out.end(), x.begin(), x.end());
    };
    model_.runPositions(ids, 0, observer);
    logits_.reset();
    return out;
}

std::vector<float> CpuRunner::attention(const std::vector<int>& ids, int layer) {
    checkReadoutLayer("attention", layer, config().layers);
    model_.checkPositions(ids, 0);
    const std::size_t T = ids.size(), heads = std::size_t(config().heads);
    std::vector<float> out(heads * T * T, 0.0f);  // heads x T x T
    CpuModel::Observer observer;
    observer.attention = [&](int l, int pos, const std::vector<float>& probs) {
        if (l != layer) return;
        const std::size_t t = std::size_t(pos);
        for (std::size_t h = 0; h < heads; ++h)
            std::copy_n(probs.begin() + std::ptrdiff_t(h * (t + 1)), t + 1,
                        out.begin() + std::ptrdiff_t((h * T + t) * T));
    };
    logits_ = model_.head(lastRow(model_.runPositions(ids, 0, observer)));
    return out;
}

void CpuRunner::setCapture(const Capture& capture) {
    capture_ = capture;
    captured_.clear();
}

void CpuRunner::endCapture() { setCapture({}); }

std::vector<CapturedPosition> CpuRunner::takeCaptured(int end) {
    std::vector<CapturedPosition> out;
    for (auto it = captured_.begin(); it != captured_.end() && it->first < end; it = captured_.erase(it))
        out.push_back(std::move(it->second));
    return out;
}

LensCell CpuRunner::topTokens(const std::vector<float>& logits, int k) {
    std::vector<int> order(logits.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
        return logits[std::size_t(a)] > logits[std::size_t(b)] ||
               (logits[std::size_t(a)] == logits[std::size_t(b)] && a < b);
    });
    const float largest = logits[std::size_t(order.front())];
    double sum = 0;
    for (const float logit : logits) sum += std::exp(double(logit) - largest);
    LensCell cell;
    for (int i = 0; i < k; ++i) {
        cell.ids.push_back(order[std::size_t(i)]);
        cell.probs.push_back(float(std::exp(double(logits[std::size_t(order[std::size_t(i)])]) - largest) / sum));
    }
    return cell;
}

}  // namespace gpt2
