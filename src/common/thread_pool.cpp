#include "common/thread_pool.h"

#include <algorithm>
#include <atomic>

namespace ogx {

ThreadPool::ThreadPool(int n) {
  if (n <= 0) n = (int)std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < n; i++) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_start_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks() {
  for (;;) {
    int64_t c;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (next_chunk_ >= job_chunks_) return;
      c = next_chunk_++;
    }
    int64_t b = c * job_chunk_, e = std::min(job_n_, b + job_chunk_);
    (*job_)(b, e);
  }
}

void ThreadPool::worker_loop(int) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_start_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    run_chunks();
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (--pending_ == 0) cv_done_.notify_one();
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
  {
    std::lock_guard<std::mutex> lk(mu_);
    job_ = &fn;
    job_n_ = n;
    job_chunk_ = chunk;
    job_chunks_ = chunks;
    next_chunk_ = 0;
    pending_ = (int)workers_.size();
    generation_++;
  }
  cv_start_.notify_all();
  run_chunks();
  std::unique_lock<std::mutex> lk(mu_);
  cv_done_.wait(lk, [&] { return pending_ == 0; });
  job_ = nullptr;
}

}  // namespace ogx
