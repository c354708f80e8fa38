#include "cpu/thread_pool.h"

#include <algorithm>
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
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job_ = &job;
            pending_ = int(threads_.size());
            ++generation_;
        }
        wake_.notify_all();
        job(0);
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [this] { return pending_ == 0; });
        job_ = nullptr;
    }

private:
    void work(int part) {
        long long seen = 0;
        for (;;) {
            const std::function<void(int)>* job = nullptr;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
                if (stopping_) return;
                seen = generation_;
                job = job_;
            }
            (*job)(part);
            std::lock_guard<std::mutex> lock(mutex_);
            if (--pending_ == 0) done_.notify_one();
        }
    }

    std::vector<std::thread> threads_;
    std::mutex mutex_, running_;
    std::condition_variable wake_, done_;
    const std::function<void(int)>* job_ = nullptr;
    long long generation_ = 0;
    int pending_ = 0;
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
