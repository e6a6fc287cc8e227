#include "common/thread_pool.h"

#include <algorithm>
#include <chrono>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ogx {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until done() or about 100 us have passed; returns done().
template <typename Done>
bool spin_until(Done done) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 1;; i++) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() - t0 > std::chrono::microseconds(100)) return done();
  }
}

}  // namespace

ThreadPool::ThreadPool(int n) {
  if (n <= 0) n = (int)std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < n; i++) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_.store(true);
  }
  cv_start_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks() {
  for (;;) {
    int64_t c = next_chunk_.fetch_add(1, std::memory_order_relaxed);
    if (c >= job_chunks_) return;
    int64_t b = c * job_chunk_, e = std::min(job_n_, b + job_chunk_);
    (*job_)(b, e);
  }
}

void ThreadPool::worker_loop(int) {
  uint64_t seen = 0;
  for (;;) {
    auto woken = [&] { return stop_.load(std::memory_order_acquire) || generation_.load(std::memory_order_acquire) != seen; };
    if (!spin_until(woken)) {
      std::unique_lock<std::mutex> lk(mu_);
      cv_start_.wait(lk, woken);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    run_chunks();
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lk(mu_);  // the caller either sees pending_ == 0 or is already waiting
      cv_done_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  int threads = num_threads();
  min_chunk = std::max<int64_t>(1, min_chunk);
  if (threads == 1 || n <= min_chunk) {
    fn(0, n);
    return;
  }
  int64_t chunks = std::min<int64_t>((n + min_chunk - 1) / min_chunk, (int64_t)threads * 4);
  int64_t chunk = (n + chunks - 1) / chunks;
  chunks = (n + chunk - 1) / chunk;
  job_ = &fn;
  job_n_ = n;
  job_chunk_ = chunk;
  job_chunks_ = chunks;
  next_chunk_.store(0, std::memory_order_relaxed);
  pending_.store((int)workers_.size(), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lk(mu_);  // a worker about to sleep re-checks generation_ under the lock
    generation_.fetch_add(1, std::memory_order_release);
  }
  cv_start_.notify_all();
  run_chunks();
  auto done = [&] { return pending_.load(std::memory_order_acquire) == 0; };
  if (!spin_until(done)) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_done_.wait(lk, done);
  }
  job_ = nullptr;
}

}  // namespace ogx
