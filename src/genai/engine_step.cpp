// One engine step (engine.h): admission, the prompt chunks of this step, the next token of every request past its
// prompt, and the bookkeeping afterwards. step_generators is the seam for a batched decode over many generators.
#include <algorithm>
#include <exception>

#include "common/error.h"
#include "genai/batch_step.h"
#include "genai/engine.h"

namespace ogx::genai {

// One batched model run for all of them (decode_together); when that fails, each generator that did not get its
// token alone, so that the error is charged to the request that caused it. (Session 8 stepped them one by one:
// decode_together gave garbage token ids under 16 concurrent serve requests. The cause was the Vulkan argmax's
// counters, placed after the batch's rows in a scratch shared by every batch size: when a request left, the smaller
// batch read the larger one's results as counters. Fixed in sample.comp; VulkanSamplingTest.SpreadArgmax* covers it.)
void step_generators(const std::vector<Generator*>& active, std::vector<std::string>& errors) {
  errors.assign(active.size(), std::string());
  std::vector<size_t> before(active.size());
  for (size_t i = 0; i < active.size(); i++) before[i] = active[i]->token_count();
  try {
    decode_together(active);
    return;
  } catch (const std::exception&) {
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

namespace {

// What the step does for one request of the running set.
struct Work {
  std::shared_ptr<Request> request;
  std::vector<int32_t> chunk;  // [n]: prompt ids to run this step (empty: none)
  bool decode = false;         // picks a token this step (its prompt is complete after the chunk)
  std::string error;
};

bool is_eos(const Model& m, int32_t id) {
  const auto& eos = m.config().model.eos_token_ids;
  return std::find(eos.begin(), eos.end(), id) != eos.end();
}

}  // namespace

void Engine::run_one_step() {
  std::vector<Work> work;
  {
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
      Work w{r, {}, false, {}};
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
  }

  // The forward passes, outside the engine's lock (other threads add, remove and read requests meanwhile).
  std::vector<Generator*> decoders;
  std::vector<size_t> decoder_work;  // [decoders]: index into work
  {
    std::lock_guard<std::mutex> ml(model_lock());
    for (size_t i = 0; i < work.size(); i++) {
      Work& w = work[i];
      Request& r = *w.request;
      try {
        if (!r.gen_) r.gen_ = r.make_generator(model_);
        if (!w.chunk.empty()) r.gen_->append_tokens(w.chunk);
        if (w.decode) {
          OGX_CHECK(!r.gen_->is_done(), "the sequence reached max_length ", r.gen_->max_length());
          if (!w.chunk.empty()) {
            // Its first token comes from its prompt's run, before another request's prompt chunk runs (through
            // decode_together: the generator is marked batched, so it queues no step ahead that the next
            // batched step would drop).
            decode_together({r.gen_.get()});
          } else {
            decoders.push_back(r.gen_.get());
            decoder_work.push_back(i);
          }
        }
      } catch (const std::exception& e) {
        w.error = e.what();
        w.decode = false;
      }
    }
    std::vector<std::string> errors;
    step_generators(decoders, errors);
    for (size_t k = 0; k < decoders.size(); k++)
      if (!errors[k].empty()) {
        work[decoder_work[k]].error = errors[k];
        work[decoder_work[k]].decode = false;
      }
  }

  std::vector<std::unique_ptr<Generator>> to_free;
  {
    std::lock_guard<std::mutex> lk(mu_);
    stats_.steps++;
    stats_.last_batch = decoders.size();
    std::vector<Request*> left_running;
    for (Work& w : work) {
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
  }
  std::lock_guard<std::mutex> ml(model_lock());
  to_free.clear();
}

}  // namespace ogx::genai
