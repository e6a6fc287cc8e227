// A fixed pool of worker threads for intra-op parallelism. parallel_for splits [0, n) into contiguous chunks;
// the calling thread takes part, so a pool of 1 thread runs everything inline.
#pragma once
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

 private:
  void worker_loop(int index);
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_start_, cv_done_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0, job_chunk_ = 0, job_chunks_ = 0;
  int64_t next_chunk_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  void run_chunks();
};

}  // namespace ogx
