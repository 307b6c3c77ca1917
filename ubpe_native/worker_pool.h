// A persistent pool of worker threads for kernels whose work comes in many short parallel
// sections (the fit's merge rounds: a section lasts tens of microseconds to milliseconds, so
// starting threads per section would cost more than it saves).
//
// `run(task, context)` calls `task(context, w)` once on every worker w = 0 .. size() - 1 - the
// caller is worker 0 - and returns when all calls have returned. A task must not throw and
// must decide by `w` alone what it does (the pool only provides the threads), so that what
// it computes does not depend on which thread runs when. Between sections a worker spins a
// little (a round's serial part is short), then sleeps on a condition variable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define UBPE_CPU_RELAX() _mm_pause()
#else
#define UBPE_CPU_RELAX() std::this_thread::yield()
#endif

namespace ubpe {

class WorkerPool {
 public:
  typedef void (*Task)(void* context, int worker);

  // Starts n_threads - 1 threads (none for n_threads <= 1); std::system_error if it cannot.
  explicit WorkerPool(int n_threads) : size_(n_threads < 1 ? 1 : n_threads) {
    try {
      for (int w = 1; w < size_; ++w) threads_.emplace_back(&WorkerPool::loop, this, w);
    } catch (...) {
      stop();
      throw;
    }
  }

  ~WorkerPool() { stop(); }

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return size_; }

  void run(Task task, void* context) {
    if (threads_.empty()) {
      task(context, 0);
      return;
    }
    task_ = task;
    context_ = context;
    pending_.store(static_cast<int>(threads_.size()), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    task(context, 0);
    for (long spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
      if (spin < kSpins) {
        UBPE_CPU_RELAX();
      } else {
        std::this_thread::yield();  // the others may be waiting for a core
      }
    }
  }

 private:
  static constexpr long kSpins = 2000;  // some 10-100 us of pause instructions

  void loop(int worker) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t now = generation_.load(std::memory_order_acquire);
      for (long spin = 0; now == seen && spin < kSpins; ++spin) {
        UBPE_CPU_RELAX();
        now = generation_.load(std::memory_order_acquire);
      }
      if (now == seen) {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        now = generation_.load(std::memory_order_acquire);
      }
      seen = now;
      if (stopping_.load(std::memory_order_acquire)) return;
      task_(context_, worker);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_.store(true, std::memory_order_release);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

  int size_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stopping_{false};
  Task task_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace ubpe
