#include "common/thread_pool.h"

#include "common/error.h"
#include "common/log.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <system_error>
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

// A pool runs at most the machine's hardware threads, or kMinThreadCap on smaller machines (so the tests of the
// threaded paths run a few threads everywhere); more is clamped with a warning (--threads 100000 once started ~32k
// threads and exhausted the process limit). A thread the OS refuses to start is an ogx::Error, after the threads
// already started are joined.
constexpr unsigned kMinThreadCap = 8;

ThreadPool::ThreadPool(int n) {
  const int hw = (int)std::max(1u, std::thread::hardware_concurrency());
  const int max_threads = (int)std::max<unsigned>(kMinThreadCap, (unsigned)hw);
  if (n <= 0) n = hw;
  if (n > max_threads) {
    log_warning("thread count " + std::to_string(n) + " clamped to " + std::to_string(max_threads) +
                " (this machine has " + std::to_string(hw) + " hardware threads)");
    n = max_threads;
  }
  try {
    for (int i = 1; i < n; i++) workers_.emplace_back([this] { worker_loop(); });
  } catch (const std::system_error& e) {
    // The OS refused a thread (process limit, memory): stop and join the ones started, then report; never hang or
    // leave joinable threads behind.
    const size_t started = workers_.size();
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_.store(true);
    }
    cv_start_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
    throw_error("cannot start thread ", started + 2, " of ", n, " for the thread pool: ", e.what(),
                " (use fewer threads)");
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_.store(true);
  }
  cv_start_.notify_all();
  for (auto& t : workers_) t.join();
}

bool ThreadPool::run_one_chunk() {
  uint64_t s = state_.load(std::memory_order_acquire);
  for (;;) {
    const uint64_t total = (s >> 16) & 0xffff, next = s & 0xffff;
    if (next >= total) return false;
    // Read before the claim: the fields change only after every chunk of this generation was claimed and done, so
    // a claim that succeeds on s proves they still belong to s.
    const auto* fn = job_.load(std::memory_order_relaxed);
    const int64_t n = job_n_.load(std::memory_order_relaxed), chunk = job_chunk_.load(std::memory_order_relaxed);
    if (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    const int64_t b = (int64_t)next * chunk;
    (*fn)(b, std::min(n, b + chunk));
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == (int64_t)total) {
      std::lock_guard<std::mutex> lk(mu_);  // the caller either sees done_ == total or is already waiting
      cv_done_.notify_one();
    }
    return true;
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = state_.load(std::memory_order_acquire) >> 32;
  for (;;) {
    auto woken = [&] {
      return stop_.load(std::memory_order_acquire) || (state_.load(std::memory_order_acquire) >> 32) != seen;
    };
    if (!spin_until(woken)) {
      std::unique_lock<std::mutex> lk(mu_);
      sleepers_.fetch_add(1, std::memory_order_relaxed);
      cv_start_.wait(lk, woken);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = state_.load(std::memory_order_acquire) >> 32;
    while (run_one_chunk()) {
    }
  }
}

void ThreadPool::parallel_for_cost(int64_t n, double item_cost, const std::function<void(int64_t, int64_t)>& fn) {
  const double min_chunk = kMinParallelCost / std::max(item_cost, 1e-9);
  parallel_for(n, (int64_t)std::min(min_chunk + 1, 9e18), fn);
}

void ThreadPool::parallel_for(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int threads = num_threads();
  min_chunk = std::max<int64_t>(1, min_chunk);
  if (threads == 1 || n <= min_chunk) {
    fn(0, n);
    return;
  }
  int64_t chunks = std::min<int64_t>((n + min_chunk - 1) / min_chunk, (int64_t)threads * 4);
  const int64_t chunk = (n + chunks - 1) / chunks;
  chunks = (n + chunk - 1) / chunk;
  job_.store(&fn, std::memory_order_relaxed);
  job_n_.store(n, std::memory_order_relaxed);
  job_chunk_.store(chunk, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lk(mu_);  // a worker about to sleep re-checks the generation under the lock
    const uint64_t gen = (state_.load(std::memory_order_relaxed) >> 32) + 1;
    state_.store((gen << 32) | ((uint64_t)chunks << 16), std::memory_order_release);
  }
  if (sleepers_.load(std::memory_order_relaxed) > 0) cv_start_.notify_all();
  while (run_one_chunk()) {
  }
  auto done = [&] { return done_.load(std::memory_order_acquire) == chunks; };
  if (!spin_until(done)) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_done_.wait(lk, done);
  }
}

}  // namespace ogx
