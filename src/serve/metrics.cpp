#include "serve/metrics.h"

#include <cstdio>

namespace ogx::serve {

namespace {
std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}
}  // namespace

void Histogram::observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) i++;
  counts_[i]++;
  sum_ += v;
  count_++;
}

void Histogram::write(std::string& out, const std::string& name, const std::string& help) const {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); i++) {
    cumulative += counts_[i];
    out += name + "_bucket{le=\"" + num(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum " + num(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
}

Metrics::Metrics()
    : ttft_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
      duration_({0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}) {}

void Metrics::request_done(const std::string& endpoint, int status) {
  std::lock_guard<std::mutex> lk(mu_);
  requests_[{endpoint, status}]++;
}

void Metrics::time_to_first_token(double seconds) {
  std::lock_guard<std::mutex> lk(mu_);
  ttft_.observe(seconds);
}

void Metrics::request_duration(double seconds) {
  std::lock_guard<std::mutex> lk(mu_);
  duration_.observe(seconds);
}

void Metrics::tokens(const std::string& model, size_t prompt, size_t completion) {
  std::lock_guard<std::mutex> lk(mu_);
  PerModel& m = models_[model];
  m.requests++;
  m.prompt_tokens += prompt;
  m.completion_tokens += completion;
}

namespace {
// A label value as the text format writes it: backslash, double quote and newline escaped.
std::string label_value(const std::string& v) {
  std::string out;
  for (char ch : v) {
    if (ch == '\\' || ch == '"') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out;
}
}  // namespace

void Metrics::sample_generated(uint64_t total) {
  std::lock_guard<std::mutex> lk(mu_);
  auto now = Clock::now();
  if (!samples_.empty() && now - samples_.back().first < std::chrono::milliseconds(250)) return;
  samples_.emplace_back(now, total);
  while (samples_.size() > 2 && now - samples_[1].first > std::chrono::seconds(10)) samples_.pop_front();
}

std::string Metrics::prometheus(const genai::EngineStats& engine, size_t in_flight, size_t max_batch,
                                size_t max_queue) const {
  std::lock_guard<std::mutex> lk(mu_);
  std::string out;
  out += "# HELP ogx_requests_total HTTP requests answered, by endpoint and status.\n"
         "# TYPE ogx_requests_total counter\n";
  for (auto& [key, n] : requests_)
    out += "ogx_requests_total{endpoint=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"} " +
           std::to_string(n) + "\n";
  auto counter = [&](const char* name, const char* help, uint64_t v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " +
           std::to_string(v) + "\n";
  };
  auto gauge = [&](const char* name, const char* help, double v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + " " + num(v) + "\n";
  };
  uint64_t prompt_tokens = 0, completion_tokens = 0;
  for (auto& [model, m] : models_) {
    prompt_tokens += m.prompt_tokens;
    completion_tokens += m.completion_tokens;
  }
  counter("ogx_prompt_tokens_total", "Prompt tokens of completed requests.", prompt_tokens);
  counter("ogx_generation_tokens_total", "Tokens generated for completed requests.", completion_tokens);
  auto per_model = [&](const char* name, const char* help, uint64_t PerModel::*field) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
    for (auto& [model, m] : models_)
      out += std::string(name) + "{model=\"" + label_value(model) + "\"} " + std::to_string(m.*field) + "\n";
  };
  per_model("ogx_model_requests_total", "Completed requests by served model (the base model or a LoRA adapter).",
            &PerModel::requests);
  per_model("ogx_model_prompt_tokens_total", "Prompt tokens of completed requests by served model.",
            &PerModel::prompt_tokens);
  per_model("ogx_model_generation_tokens_total", "Tokens generated for completed requests by served model.",
            &PerModel::completion_tokens);
  counter("ogx_engine_steps_total", "Engine steps that ran the model.", engine.steps);
  counter("ogx_engine_generated_tokens_total", "Tokens the engine generated (all requests, also unfinished).",
          engine.generated_tokens);
  auto seconds = [&](const char* name, const char* help, double v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " + num(v) + "\n";
  };
  seconds("ogx_engine_step_seconds_total", "Time in engine steps (all phases below, plus bookkeeping).",
          engine.step_seconds);
  seconds("ogx_engine_decode_seconds_total", "Time in the decoding requests' batched model runs (with the picks).",
          engine.decode_seconds);
  seconds("ogx_engine_prompt_seconds_total", "Time in prompt-chunk model runs (with a completed prompt's first token).",
          engine.prompt_seconds);
  seconds("ogx_engine_lock_wait_seconds_total", "Time engine steps waited for the model lock.",
          engine.lock_wait_seconds);
  if (!engine.session.empty()) {  // e.g. runs / queued_runs / dropped_runs: whether decode steps were queued ahead
    out += "# HELP ogx_session_stat The model session's counters (runs, queued_runs, dropped_runs, submits, ...), "
           "as of the latest engine step (at most 200 ms old).\n# TYPE ogx_session_stat gauge\n";
    for (auto& [name, v] : engine.session)
      out += "ogx_session_stat{stat=\"" + label_value(name) + "\"} " + num(v) + "\n";
  }
  gauge("ogx_queue_depth", "Requests waiting for a place in the running batch.", (double)engine.queued);
  gauge("ogx_running_requests", "Requests in the running batch.", (double)engine.running);
  gauge("ogx_batch_size", "Sequences that got a token in the latest engine step.", (double)engine.last_batch);
  gauge("ogx_requests_in_flight", "Engine requests admitted by the HTTP layer (running + queued).", (double)in_flight);
  gauge("ogx_max_batch", "--max-batch.", (double)max_batch);
  gauge("ogx_max_queue", "--max-queue.", (double)max_queue);
  double rate = 0;
  if (samples_.size() >= 2) {
    double dt = std::chrono::duration<double>(samples_.back().first - samples_.front().first).count();
    if (dt > 0) rate = (double)(samples_.back().second - samples_.front().second) / dt;
  }
  gauge("ogx_generation_tokens_per_second", "Generated tokens per second over the last 10 s.", rate);
  ttft_.write(out, "ogx_time_to_first_token_seconds", "Time from a request's arrival to its first generated token.");
  duration_.write(out, "ogx_request_duration_seconds", "Time from a request's arrival to its last token.");
  return out;
}

}  // namespace ogx::serve
