// Prometheus metrics of `ogx serve` (GET /metrics, text format 0.0.4): requests by endpoint and status, prompt and
// generated tokens (in all, and per served model: the base model or a LoRA adapter), queue depth, running requests,
// batch size, time to first token and request duration (histograms), generated tokens per second over the last 10 s,
// and the engine steps' time by phase (decode runs, prompt runs, model-lock waits; the rest of the step time is
// bookkeeping, the rest of the wall time idle).
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "genai/engine.h"

namespace ogx::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}
  void observe(double v);
  void write(std::string& out, const std::string& name, const std::string& help) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // [bounds + 1]: per bucket (not cumulative); the last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();
  void request_done(const std::string& endpoint, int status);
  void time_to_first_token(double seconds);
  void request_duration(double seconds);
  // A finished request of `model` (the base model's name or an adapter's) with its token counts.
  void tokens(const std::string& model, size_t prompt, size_t completion);
  // The engine's generated-token total now (the stepping thread calls it; feeds the tokens/s gauge).
  void sample_generated(uint64_t total);
  std::string prometheus(const genai::EngineStats& engine, size_t in_flight, size_t max_batch, size_t max_queue) const;

 private:
  using Clock = std::chrono::steady_clock;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (endpoint, status) -> count
  struct PerModel {
    uint64_t requests = 0, prompt_tokens = 0, completion_tokens = 0;
  };
  std::map<std::string, PerModel> models_;  // finished requests by served model name (the totals are their sums)
  Histogram ttft_, duration_;
  std::deque<std::pair<Clock::time_point, uint64_t>> samples_;  // (time, generated total), the last ~10 s
};

}  // namespace ogx::serve
