// One engine step (engine.h): admission, the next token of every request past its prompt, the prompt chunks of this
// step, and the bookkeeping afterwards. step_generators is the seam for a batched decode over many generators.
#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <set>
#include <string>

#include "common/error.h"
#include "common/log.h"
#include "genai/batch_step.h"
#include "genai/engine.h"

namespace ogx::genai {

// One batched model run for all of them (decode_together); when that fails, each generator that did not get its
// token alone, so that the error is charged to the request that caused it. (Session 8 stepped them one by one:
// decode_together gave garbage token ids under 16 concurrent serve requests. The cause was the Vulkan argmax's
// counters, placed after the batch's rows in a scratch shared by every batch size: when a request left, the smaller
// batch read the larger one's results as counters. Fixed in sample.comp; VulkanSamplingTest.SpreadArgmax* covers it.)
void step_generators(const std::vector<Generator*>& active, std::vector<std::string>& errors, bool queue_ahead) {
  errors.assign(active.size(), std::string());
  std::vector<size_t> before(active.size());
  for (size_t i = 0; i < active.size(); i++) before[i] = active[i]->token_count();
  try {
    decode_together(active, queue_ahead);
    return;
  } catch (const std::exception& e) {  // (said once per message: stepping alone costs a run per generator)
    static std::mutex mu;
    static std::set<std::string> said;
    std::lock_guard<std::mutex> lock(mu);
    if (said.size() < 16 && said.insert(e.what()).second)
      log_warning(std::string("engine: the batched step failed, its generators step alone: ") + e.what());
  }
  for (size_t i = 0; i < active.size(); i++) {
    if (active[i]->token_count() > before[i]) continue;
    try {
      active[i]->generate_next_token();
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  }
}

// What the step does for one request of the running set.
struct Engine::StepWork {
  std::shared_ptr<Request> request;
  std::vector<int32_t> chunk;  // [n]: prompt ids to run this step (empty: none)
  bool decode = false;         // picks a token this step (its prompt is complete after the chunk)
  std::string error;
};

namespace {

bool is_eos(const Model& m, int32_t id) {
  const auto& eos = m.config().model.eos_token_ids;
  return std::find(eos.begin(), eos.end(), id) != eos.end();
}

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

std::vector<Engine::StepWork> Engine::admit_and_plan() {
  std::vector<StepWork> work;
  std::lock_guard<std::mutex> lk(mu_);
  while ((int)running_.size() < options_.max_batch && !queued_.empty()) {
    auto r = std::move(queued_.front());
    queued_.pop_front();
    std::lock_guard<std::mutex> rl(r->mu_);
    r->status_ = RequestStatus::active;
    running_.push_back(std::move(r));
  }
  size_t budget = (size_t)options_.prefill_chunk;
  for (auto& r : running_) {
    std::lock_guard<std::mutex> rl(r->mu_);
    StepWork w{r, {}, false, {}};
    const size_t left = r->input_.size() - r->input_done_;
    if (left > 0) {
      if (budget == 0) continue;  // its next chunk waits for a later step
      const size_t n = std::min(left, budget);
      budget -= n;
      w.chunk.assign(r->input_.begin() + r->input_done_, r->input_.begin() + r->input_done_ + n);
      w.decode = n == left;
    } else {
      w.decode = true;
    }
    r->in_step_ = true;
    work.push_back(std::move(w));
  }
  return work;
}

// The requests past their prompt, before any prompt runs: a step the previous engine step queued ahead for them gives
// this step's tokens (a prompt run first would drop it). Their run queues the next step only when no prompt runs in
// this step either (the device then runs that step while the engine does its bookkeeping).
size_t Engine::run_decoders(std::vector<StepWork>& work) {
  std::vector<Generator*> decoders;
  std::vector<size_t> index;  // [decoders]: into work
  bool prompts = false;
  for (size_t i = 0; i < work.size(); i++) {
    StepWork& w = work[i];
    prompts = prompts || !w.chunk.empty();
    if (!w.chunk.empty() || !w.decode) continue;
    Request& r = *w.request;
    if (!r.gen_ || r.gen_->is_done()) {  // (a request past its prompt has its generator)
      w.error = r.gen_ ? "the sequence reached max_length " + std::to_string(r.gen_->max_length())
                       : std::string("the request has no generator");
      w.decode = false;
      continue;
    }
    decoders.push_back(r.gen_.get());
    index.push_back(i);
  }
  std::vector<std::string> errors;
  step_generators(decoders, errors, /*queue_ahead=*/!prompts);
  for (size_t k = 0; k < decoders.size(); k++)
    if (!errors[k].empty()) {
      work[index[k]].error = errors[k];
      work[index[k]].decode = false;
    }
  return decoders.size();
}

void Engine::run_prompts(std::vector<StepWork>& work) {
  for (StepWork& w : work) {
    if (w.chunk.empty()) continue;
    Request& r = *w.request;
    try {
      if (!r.gen_) r.gen_ = r.make_generator(model_);
      r.gen_->append_tokens(w.chunk);
      if (w.decode) {
        OGX_CHECK(!r.gen_->is_done(), "the sequence reached max_length ", r.gen_->max_length());
        // Its first token comes from its prompt's run, before another request's prompt chunk runs (through
        // decode_together: no step is queued ahead, which the next prompt run would drop).
        decode_together({r.gen_.get()});
      }
    } catch (const std::exception& e) {
      w.error = e.what();
      w.decode = false;
    }
  }
}

void Engine::run_one_step() {
  using Clock = std::chrono::steady_clock;
  const auto t_start = Clock::now();
  std::vector<StepWork> work = admit_and_plan();
  size_t decoded = 0;
  Clock::time_point t_model, t_decoded, t_prompts;
  {  // The forward passes, outside the engine's lock (other threads add, remove and read requests meanwhile).
    std::lock_guard<std::mutex> ml(model_lock());
    t_model = Clock::now();
    decoded = run_decoders(work);
    t_decoded = Clock::now();
    run_prompts(work);
    t_prompts = Clock::now();
  }

  std::vector<std::unique_ptr<Generator>> to_free;
  bool idle = false;  // no request left after this step
  {
    std::lock_guard<std::mutex> lk(mu_);
    stats_.steps++;
    stats_.last_batch = decoded;
    std::vector<Request*> left_running;
    for (StepWork& w : work) {
      Request& r = *w.request;
      std::lock_guard<std::mutex> rl(r.mu_);
      r.in_step_ = false;
      if (r.status_ == RequestStatus::closed) {  // removed during the step
        to_free.push_back(std::move(r.gen_));
        continue;
      }
      if (!w.error.empty()) {
        end_turn_locked(r, FinishReason::error, w.error);
        to_free.push_back(std::move(r.gen_));  // its state is unknown after a failure
        left_running.push_back(&r);
        ready_.push_back(w.request);
        continue;
      }
      r.input_done_ += w.chunk.size();
      stats_.prompt_tokens += w.chunk.size();
      if (!w.decode) continue;
      const int32_t token = r.gen_->last_token();
      r.unseen_.push_back(token);
      r.generated_total_++;
      stats_.generated_tokens++;
      if (r.gen_->is_done()) {
        const bool length = r.gen_->token_count() >= (size_t)r.gen_->max_length() && !is_eos(*model_, token);
        end_turn_locked(r, length ? FinishReason::length : FinishReason::eos);
        left_running.push_back(&r);
        parked_.push_back(w.request);
      }
      r.cv_.notify_all();
      ready_.push_back(w.request);
    }
    for (auto& g : deferred_free_) to_free.push_back(std::move(g));  // removed by other threads during the passes
    deferred_free_.clear();
    if (!left_running.empty())
      running_.erase(std::remove_if(running_.begin(), running_.end(),
                                    [&](auto& p) {
                                      return std::find(left_running.begin(), left_running.end(), p.get()) !=
                                             left_running.end();
                                    }),
                     running_.end());
    idle = running_.empty() && queued_.empty();
  }
  std::vector<std::pair<std::string, double>> session;
  const bool snapshot = idle || Clock::now() - session_stats_at_ > std::chrono::milliseconds(200);
  {
    std::lock_guard<std::mutex> ml(model_lock());
    to_free.clear();
    if (snapshot) session = model_->session().stats();
  }
  std::lock_guard<std::mutex> lk(mu_);
  if (snapshot) {
    stats_.session = std::move(session);
    session_stats_at_ = Clock::now();
  }
  stats_.lock_wait_seconds += seconds(t_model - t_start);
  stats_.decode_seconds += seconds(t_decoded - t_model);
  stats_.prompt_seconds += seconds(t_prompts - t_decoded);
  stats_.step_seconds += seconds(Clock::now() - t_start);
}

}  // namespace ogx::genai
