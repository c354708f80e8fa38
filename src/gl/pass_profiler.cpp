#include "gl/pass_profiler.h"

#include <utility>

#include "gl/capabilities.h"
#include "util/error.h"

// EXT_disjoint_timer_query (GLES) and EXT_disjoint_timer_query_webgl2 share these enums.
#ifndef GL_TIME_ELAPSED_EXT
#define GL_TIME_ELAPSED_EXT 0x88BF
#endif
#ifndef GL_GPU_DISJOINT_EXT
#define GL_GPU_DISJOINT_EXT 0x8FBB
#endif

namespace gpt2 {
namespace {
#ifdef __EMSCRIPTEN__
constexpr const char* kTimerExtension = "EXT_disjoint_timer_query_webgl2";
#else
constexpr const char* kTimerExtension = "EXT_disjoint_timer_query";
#endif
}  // namespace

PassProfiler& PassProfiler::instance() {
    static PassProfiler profiler;
    return profiler;
}

long long passDraws() { return PassProfiler::instance().draws_; }

bool gpuTimersAvailable() { return hasGlExtension(kTimerExtension); }

bool gpuTimerResultsWaitForTheTask() {
#ifdef __EMSCRIPTEN__
    return true;
#else
    return false;
#endif
}

void setPassProfiling(PassProfiling mode, const std::string& phase) {
    PassProfiler& p = PassProfiler::instance();
    if (mode == PassProfiling::GpuTimers && p.mode_ != PassProfiling::GpuTimers) {
        if (!gpuTimersAvailable()) fail("profile: this context has no GPU timer queries (", kTimerExtension, ")");
        GLint disjoint = 0;
        glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);  // reading it clears it
    }
    p.mode_ = mode;
    p.phase_ = phase;
}

bool passProfileReady() {
    const auto& pending = PassProfiler::instance().pending_;
    // Results arrive in the order the queries were issued.
    if (pending.empty()) return true;
    GLuint available = 0;
    glGetQueryObjectuiv(pending.back().query.get(), GL_QUERY_RESULT_AVAILABLE, &available);
    return available != 0;
}

std::map<std::string, std::map<std::string, double>> takePassProfile() {
    PassProfiler& p = PassProfiler::instance();
    for (PassProfiler::PendingTiming& t : p.pending_) {
        GLuint nanoseconds = 0;  // 32 bits: up to 4.2 s per pass
        glGetQueryObjectuiv(t.query.get(), GL_QUERY_RESULT, &nanoseconds);
        p.profile_[t.phase][t.key] += nanoseconds * 1e-6;
    }
    const bool timed = !p.pending_.empty();
    p.pending_.clear();
    if (timed) {
        GLint disjoint = 0;
        glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);
        if (disjoint) {
            p.profile_.clear();
            fail("profile: the GPU timer queries were disjoint (a clock change or GPU reset); run it again");
        }
    }
    return std::exchange(p.profile_, {});
}

PassProfiler::Timing PassProfiler::start() {
    Timing timing{std::chrono::steady_clock::now(), {}};
    if (mode_ == PassProfiling::GpuTimers) {
        timing.query = GlObject::query();
        glBeginQuery(GL_TIME_ELAPSED_EXT, timing.query.get());
    }
    return timing;
}

void PassProfiler::finish(Timing timing, const std::string& key, const std::function<void()>& waitForResult) {
    if (mode_ == PassProfiling::GpuTimers) {
        glEndQuery(GL_TIME_ELAPSED_EXT);
        pending_.push_back({phase_, key, std::move(timing.query)});
    } else if (mode_ == PassProfiling::WallClock) {
        waitForResult();
        profile_[phase_][key] +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - timing.start).count();
    }
}

}  // namespace gpt2
