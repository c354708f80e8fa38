#pragma once
// Draw counts and the per-pass profile of Pass::run (benchmarks only). One profiler serves the
// process: a profile is of everything drawn while it is on, whichever model drew it.
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gl/gl_objects.h"

namespace gpt2 {

// Draw calls made by all passes since the process started (benchmarks report passes per token).
long long passDraws();

// Profiling (benchmarks only): while on, every pass adds its time to its entry, keyed
// "shader -> output texture", under the phase named when profiling was set. GpuTimers: the GPU time
// of its draws, from EXT_disjoint_timer_query (EXT_disjoint_timer_query_webgl2 in browsers), read
// when the profile is taken: the pipeline never stalls. WallClock: each pass waits for its own result
// (a 1-texel readback, which also waits in browsers, where glFinish does not) and adds its wall time,
// so profiled runs are slower than plain ones.
enum class PassProfiling { Off, WallClock, GpuTimers };
bool gpuTimersAvailable();
// WebGL hands timer query results out only after the task that issued them has returned to the
// browser's event loop: there, take the profile in a later task, once passProfileReady().
bool gpuTimerResultsWaitForTheTask();
void setPassProfiling(PassProfiling mode, const std::string& phase = "");
// Whether every timer query issued so far has its result.
bool passProfileReady();
// Milliseconds per phase and entry so far (waiting for timer results where the context can); clears
// them. Throws if the GPU timers were disjoint (a clock change or reset made them meaningless).
std::map<std::string, std::map<std::string, double>> takePassProfile();

// What Pass::run asks of the profiler around its draws.
class PassProfiler {
public:
    static PassProfiler& instance();
    void countDraws(long long draws) { draws_ += draws; }
    // Whether passes are timed: start() and finish() are called only then, so that a plain run pays
    // for nothing but this test.
    bool timing() const { return mode_ != PassProfiling::Off; }
    // A pass's timing under way: started before its first draw.
    struct Timing {
        std::chrono::steady_clock::time_point start;
        GlObject query;
    };
    Timing start();
    // After the pass's last draw: adds its time to the entry `key`. WallClock waits for the pass's
    // result with `waitForResult` first.
    void finish(Timing timing, const std::string& key, const std::function<void()>& waitForResult);

private:
    friend long long passDraws();
    friend void setPassProfiling(PassProfiling mode, const std::string& phase);
    friend bool passProfileReady();
    friend std::map<std::string, std::map<std::string, double>> takePassProfile();
    struct PendingTiming {
        std::string phase, key;
        GlObject query;
    };
    long long draws_ = 0;
    PassProfiling mode_ = PassProfiling::Off;
    std::string phase_;
    std::vector<PendingTiming> pending_;  // timer queries not read yet
    std::map<std::string, std::map<std::string, double>> profile_;
};

}  // namespace gpt2
