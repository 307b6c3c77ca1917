// A persistent pool of worker threads for kernels whose work comes in many short parallel
// sections (the fit's merge rounds: a section lasts tens of microseconds to milliseconds, so
// starting threads per section would cost more than it saves).
//
// `run(task, context)` calls `task(context, 0)` on the calling thread and `task(context, w)` on
// every worker w = 1 .. size() - 1 that wakes up while the section is open; it returns once the
// caller's call has returned and no worker is inside the section. A task claims its items with
// `claim()` (0, 1, 2, ... for the section; past the last it returns to the caller), so all
// items are done by whichever threads are there: a worker that a busy machine does not
// schedule in time costs nothing but the items the caller does instead. A task must not throw,
// and what it computes for an item must not depend on which worker does it (each has its own
// scratch, by `w`). Between sections a worker spins a little, then sleeps.
//
// In a child forked while a pool exists the workers do not exist: `run` does every item on the
// calling thread, and the pool's end leaves the threads' handles alone.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#ifdef _WIN32
#include <process.h>
#define UBPE_PROCESS_ID() _getpid()
#else
#include <unistd.h>
#define UBPE_PROCESS_ID() getpid()
#endif

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
  explicit WorkerPool(int n_threads) : size_(n_threads < 1 ? 1 : n_threads), owner_(UBPE_PROCESS_ID()) {
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

  // The next item of the running section.
  std::ptrdiff_t claim() { return next_.fetch_add(1); }

  // `workers_only` (tests): the caller does no item but waits for a worker to do them all.
  void run(Task task, void* context, bool workers_only = false) {
    next_.store(0);
    if (threads_.empty() || UBPE_PROCESS_ID() != owner_) {
      task(context, 0);
      return;
    }
    task_ = task;
    context_ = context;
    finished_.store(0);
    open_.store(true);
    generation_.fetch_add(1);
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(sync_->mutex);
      sync_->wake.notify_all();
    }
    if (!workers_only) {
      task(context, 0);
    } else {
      for (long spin = 0; finished_.load() == 0; ++spin) {  // a worker has claimed every item
        if (spin < kSpins) {
          UBPE_CPU_RELAX();
        } else {
          std::this_thread::yield();
        }
      }
    }
    // close the section, then wait for the workers inside it (one that enters later sees it
    // closed and leaves the task alone)
    open_.store(false);
    for (long spin = 0; active_.load() != 0; ++spin) {
      if (spin < kSpins) {
        UBPE_CPU_RELAX();
      } else {
        std::this_thread::yield();
      }
    }
  }

 private:
  static constexpr long kSpins = 2000;  // some 10-100 us of pause instructions

  void loop(int worker) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t now = generation_.load();
      for (long spin = 0; now == seen && spin < kSpins; ++spin) {
        UBPE_CPU_RELAX();
        now = generation_.load();
      }
      if (now == seen) {
        sleepers_.fetch_add(1);
        {
          std::unique_lock<std::mutex> lock(sync_->mutex);
          sync_->wake.wait(lock, [&] { return generation_.load() != seen; });
        }
        sleepers_.fetch_sub(1);
        now = generation_.load();
      }
      seen = now;
      if (stopping_.load()) return;
      active_.fetch_add(1);
      if (open_.load()) {
        task_(context_, worker);  // (task_ and context_ are the open section's)
        finished_.fetch_add(1);
      }
      active_.fetch_sub(1);
    }
  }

  void stop() {
    if (UBPE_PROCESS_ID() != owner_) {
      // a forked child: the threads are the parent's; joining or destroying their handles,
      // or the condition variable they may wait on, would fail or block, so all are left
      new std::vector<std::thread>(std::move(threads_));
      threads_.clear();
      sync_.release();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(sync_->mutex);
      stopping_.store(true);
      generation_.fetch_add(1);
      sync_->wake.notify_all();
    }
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

  // every atomic is sequentially consistent: a worker's `active_` increment and the caller's
  // closing store are ordered, so either the caller waits for the worker or the worker sees
  // the section closed
  int size_;
  long owner_;
  std::vector<std::thread> threads_;
  struct Sync {
    std::mutex mutex;
    std::condition_variable wake;
  };
  std::unique_ptr<Sync> sync_{new Sync()};
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<int> active_{0};
  std::atomic<int> finished_{0};
  std::atomic<bool> open_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<std::ptrdiff_t> next_{0};
  Task task_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace ubpe
