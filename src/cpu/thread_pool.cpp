#include "cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__EMSCRIPTEN_PTHREADS__)
#include <emscripten.h>
#endif

namespace gpt2::cpu {
namespace {

// A thread beyond the glue's pool of workers would start only once the calling thread returns to
// its event loop, which a running job never does: in wasm the pool is exactly the glue's.
int workersToStart() {
#if defined(__EMSCRIPTEN_PTHREADS__)
    return EM_ASM_INT({ return Module['pthreadPoolSize']; }) + 1;
#elif defined(__EMSCRIPTEN__)
    return 1;
#else
    return std::max(1, int(std::thread::hardware_concurrency()));
#endif
}

// Workers that wait for a job, run their part of it, and report; the calling thread runs part 0.
// A decode step is dozens of jobs a few hundred microseconds apart: a worker spins 200 us for the next
// before it sleeps, as waking a sleeping one costs about as much as a small job (in wasm, a futex
// wait on shared memory).
class Pool {
public:
    explicit Pool(int workers) {
        for (int i = 1; i < workers; ++i) threads_.emplace_back([this, i] { work(i); });
    }
    ~Pool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : threads_) t.join();
    }
    int size() const { return int(threads_.size()) + 1; }

    void run(const std::function<void(int part)>& job) {
        std::lock_guard<std::mutex> one(running_);  // one job at a time, whoever calls
        job_ = &job;
        pending_.store(int(threads_.size()));
        generation_.fetch_add(1);
        {
            // Under the lock a worker checks the generation before it sleeps: none misses this one.
            std::lock_guard<std::mutex> lock(mutex_);
            if (sleepers_ > 0) wake_.notify_all();
        }
        job(0);
        while (pending_.load() != 0) pause();
    }

private:
    static constexpr std::chrono::microseconds kSpin{200};

    // Natively a spinning thread yields, so that other processes' threads run where cores are shared
    // (the tests run two processes on two cores). In wasm it only polls: Emscripten's sched_yield
    // processes the thread's queued calls, and 16 threads doing so took a decode step of GPT-2 124M
    // from 11 to 22-32 ms.
    static void pause() {
#ifndef __EMSCRIPTEN__
        std::this_thread::yield();
#endif
    }

    void work(int part) {
        long long seen = 0;
        for (;;) {
            // The clock is read every 256 polls: in wasm a read is a call into JavaScript.
            const auto until = std::chrono::steady_clock::now() + kSpin;
            for (int polls = 1; generation_.load() == seen; ++polls) {
                if (polls % 256 == 0 && std::chrono::steady_clock::now() >= until) break;
                pause();
            }
            if (generation_.load() == seen) {
                std::unique_lock<std::mutex> lock(mutex_);
                ++sleepers_;
                wake_.wait(lock, [&] { return stopping_ || generation_.load() != seen; });
                --sleepers_;
                if (stopping_) return;
            }
            seen = generation_.load();
            (*job_)(part);
            pending_.fetch_sub(1);
        }
    }

    std::vector<std::thread> threads_;
    std::mutex mutex_, running_;
    std::condition_variable wake_;
    const std::function<void(int)>* job_ = nullptr;
    std::atomic<long long> generation_{0};
    std::atomic<int> pending_{0};
    int sleepers_ = 0;
    bool stopping_ = false;
};

Pool& pool() {
    static Pool instance(workersToStart());
    return instance;
}

}  // namespace

int workerCount() { return pool().size(); }

void parallelFor(int count, int grain, const std::function<void(int begin, int end)>& body) {
    const int units = (count + grain - 1) / grain, parts = std::min(workerCount(), units);
    if (parts <= 1) return body(0, count);
    pool().run([&](int part) {
        if (part >= parts) return;
        const int begin = std::min(count, units * part / parts * grain);
        const int end = std::min(count, units * (part + 1) / parts * grain);
        if (begin < end) body(begin, end);
    });
}

}  // namespace gpt2::cpu
