// A fixed pool of worker threads for intra-op parallelism. parallel_for splits [0, n) into contiguous chunks;
// the calling thread takes part, so a pool of 1 thread runs everything inline.
//
// Workers and the caller spin briefly (about 100 us) before sleeping on a condition variable: a decode step runs
// hundreds of small parallel_for calls back to back, and a futex wake-up per call costs tens of microseconds on a
// VM — more than the work of a small op (measured: a 2-layer golden model decoded at 1.7k tokens/s with 2 threads
// against 8.7k with 1 before spinning).
//
// Chunks are claimed with one compare-and-swap on a word holding (job generation, chunk count, next chunk), and the
// caller waits only for chunks that were claimed: a worker that the OS has not scheduled yet (the machine busy with
// other work) never holds the caller up — the caller runs the chunks itself, and the late worker finds none left.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ogx {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);  // <= 0: hardware concurrency
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return (int)workers_.size() + 1; }
  // fn(begin, end) over chunks of at least min_chunk items.
  void parallel_for(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn);
  // The same, for items costing about item_cost elementary operations each: work too small to pay for a hand-off
  // to another thread (under kMinParallelCost in all) runs on the calling thread.
  void parallel_for_cost(int64_t n, double item_cost, const std::function<void(int64_t, int64_t)>& fn);
  static constexpr double kMinParallelCost = 1 << 18;

 private:
  void worker_loop();
  bool run_one_chunk();  // claims and runs one chunk of the current job; false when none is left
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_start_, cv_done_;
  // state_: generation (32 bits) | chunk count (16 bits) | next chunk (16 bits). The job fields are written by the
  // caller before it publishes a new generation and are valid for whoever claims a chunk of that generation.
  std::atomic<uint64_t> state_{0};
  std::atomic<const std::function<void(int64_t, int64_t)>*> job_{nullptr};
  std::atomic<int64_t> job_n_{0}, job_chunk_{0};
  std::atomic<int64_t> done_{0};  // chunks of the current job finished
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace ogx
