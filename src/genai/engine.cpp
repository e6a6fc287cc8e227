// Engine and Request (engine.h): the request lifecycle, admission into the running set, chunked prompts and the
// step loop. The forward passes of a step's decoding generators go through step_generators (engine_step.cpp).
#include "genai/engine.h"

#include <algorithm>

#include "common/error.h"

namespace ogx::genai {

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::none: return "none";
    case FinishReason::eos: return "eos";
    case FinishReason::length: return "length";
    case FinishReason::error: return "error";
    case FinishReason::removed: return "removed";
  }
  return "none";
}

// ---- Request ----

Request::Request(const GeneratorParams& params) : params_(params) {
  OGX_CHECK(params.search.batch_size == 1, "an engine request holds one sequence: batch_size must be 1, got ",
            params.search.batch_size);
  OGX_CHECK(params.search.num_beams == 1, "an engine request holds one sequence: num_beams must be 1, got ",
            params.search.num_beams);
}

void Request::add_tokens(const std::vector<int32_t>& tokens) {
  std::lock_guard<std::mutex> lk(mu_);
  OGX_CHECK(status_ == RequestStatus::unassigned,
            "add_tokens: the request was already added to an engine (use continue_with for another turn)");
  input_.insert(input_.end(), tokens.begin(), tokens.end());
  input_total_ += tokens.size();
}

void Request::continue_with(const std::vector<int32_t>& tokens) {
  Engine* e;
  {
    std::lock_guard<std::mutex> lk(mu_);
    e = engine_;
  }
  OGX_CHECK(e, "continue_with: the request is not in an engine (add_tokens, then add it to an engine)");
  e->continue_request(*this, tokens);
}

bool Request::has_unseen_tokens() const {
  std::lock_guard<std::mutex> lk(mu_);
  return !unseen_.empty();
}

int32_t Request::get_unseen_token() {
  std::lock_guard<std::mutex> lk(mu_);
  OGX_CHECK(!unseen_.empty(), "get_unseen_token: the request has no unseen tokens");
  int32_t t = unseen_.front();
  unseen_.pop_front();
  return t;
}

size_t Request::take_unseen_tokens(std::vector<int32_t>& out) {
  std::lock_guard<std::mutex> lk(mu_);
  size_t n = unseen_.size();
  out.insert(out.end(), unseen_.begin(), unseen_.end());
  unseen_.clear();
  return n;
}

bool Request::is_turn_complete() const {
  std::lock_guard<std::mutex> lk(mu_);
  return status_ == RequestStatus::turn_complete || status_ == RequestStatus::closed;
}

RequestStatus Request::status() const {
  std::lock_guard<std::mutex> lk(mu_);
  return status_;
}

FinishReason Request::finish_reason() const {
  std::lock_guard<std::mutex> lk(mu_);
  return finish_;
}

std::string Request::error() const {
  std::lock_guard<std::mutex> lk(mu_);
  return error_;
}

bool Request::wait(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_for(lk, timeout, [&] {
    return !unseen_.empty() || status_ == RequestStatus::turn_complete || status_ == RequestStatus::closed;
  });
}

size_t Request::input_token_count() const {
  std::lock_guard<std::mutex> lk(mu_);
  return input_total_;
}

size_t Request::generated_token_count() const {
  std::lock_guard<std::mutex> lk(mu_);
  return generated_total_;
}

void Request::set_active_adapter(const std::shared_ptr<Adapters>& adapters, const std::string& name) {
  OGX_CHECK(adapters != nullptr, "set_active_adapter: no adapters");
  std::lock_guard<std::mutex> lk(mu_);
  OGX_CHECK(status_ == RequestStatus::unassigned, "set_active_adapter: the request was already added to an engine");
  OGX_CHECK(!adapters_, "set_active_adapter: the request already has adapter '", adapter_name_, "'");
  adapter_lease_ = adapters->acquire(name);  // throws when it is not loaded
  adapters_ = adapters;
  adapter_name_ = name;
}

std::unique_ptr<Generator> Request::make_generator(const std::shared_ptr<const Model>& model) const {
  auto gen = std::make_unique<Generator>(model, params_);
  if (adapters_) gen->set_active_adapter(adapters_, adapter_name_);
  return gen;
}

void Request::set_opaque_data(void* data) {
  std::lock_guard<std::mutex> lk(mu_);
  opaque_ = data;
}

void* Request::opaque_data() const {
  std::lock_guard<std::mutex> lk(mu_);
  return opaque_;
}

// ---- Engine ----

Engine::Engine(std::shared_ptr<const Model> model, EngineOptions options)
    : model_(std::move(model)), options_(options) {
  OGX_CHECK(model_, "Engine: no model");
  OGX_CHECK(options_.max_batch >= 1 && options_.max_batch <= 4096, "Engine: max_batch must be in [1, 4096], got ",
            options_.max_batch);
  OGX_CHECK(options_.prefill_chunk >= 1, "Engine: prefill_chunk must be >= 1, got ", options_.prefill_chunk);
}

Engine::~Engine() {
  std::lock_guard<std::mutex> step_lock(step_mu_);
  std::vector<std::unique_ptr<Generator>> gens;
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto close = [&](const std::shared_ptr<Request>& r) {
      std::lock_guard<std::mutex> rl(r->mu_);
      if (r->status_ != RequestStatus::turn_complete) r->finish_ = FinishReason::removed;
      r->status_ = RequestStatus::closed;
      r->engine_ = nullptr;
      if (r->gen_) gens.push_back(std::move(r->gen_));
      r->cv_.notify_all();
    };
    for (auto& r : queued_) close(r);
    for (auto& r : running_) close(r);
    for (auto& r : parked_) close(r);
    queued_.clear();
    running_.clear();
    parked_.clear();
    ready_.clear();
    for (auto& g : deferred_free_) gens.push_back(std::move(g));
  }
  std::lock_guard<std::mutex> ml(model_lock());
  gens.clear();
}

int Engine::max_length_of(const GeneratorParams& params) const {
  const int context = model_->config().model.context_length;
  int ml = params.search.max_length > 0 ? params.search.max_length : context;
  OGX_CHECK(ml > 0, "max_length is not set (search.max_length and model.context_length are 0)");
  if (context > 0) ml = std::min(ml, context);
  return ml;
}

namespace {
void check_ids(const std::vector<int32_t>& ids, int vocab, const char* what) {
  for (int32_t id : ids)
    OGX_CHECK(id >= 0 && (vocab <= 0 || id < vocab), what, ": token id ", id, " is out of range [0, ", vocab, ")");
}
}  // namespace

void Engine::add_request(const std::shared_ptr<Request>& request) { add_requests({request}); }

void Engine::add_requests(const std::vector<std::shared_ptr<Request>>& requests) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (size_t i = 0; i < requests.size(); i++) {  // check all first: none is queued when one is refused
      OGX_CHECK(requests[i], "add_request: no request");
      Request& r = *requests[i];
      std::lock_guard<std::mutex> rl(r.mu_);
      OGX_CHECK(r.status_ == RequestStatus::unassigned, "add_request: the request was already added to an engine");
      for (size_t j = 0; j < i; j++)
        OGX_CHECK(requests[j] != requests[i], "add_request: the same request is given twice");
      OGX_CHECK(!r.input_.empty(), "add_request: the request has no tokens (add_tokens first)");
      check_ids(r.input_, model_->io().vocab_size, "add_request");
      OGX_CHECK(!r.adapters_ || &r.adapters_->model() == model_.get(), "add_request: adapter '", r.adapter_name_,
                "' was loaded for another model than the engine's");
      const int ml = max_length_of(r.params_);
      OGX_CHECK(r.input_.size() < (size_t)ml, "add_request: the prompt's ", r.input_.size(),
                " tokens leave no room below max_length ", ml);
    }
    for (auto& request : requests) {
      std::lock_guard<std::mutex> rl(request->mu_);
      request->engine_ = this;
      request->status_ = RequestStatus::queued;
      queued_.push_back(request);
    }
  }
  pending_cv_.notify_all();
}

void Engine::continue_request(Request& r, const std::vector<int32_t>& tokens) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    std::lock_guard<std::mutex> rl(r.mu_);
    OGX_CHECK(r.engine_ == this, "continue_with: the request is not in this engine");
    OGX_CHECK(r.status_ == RequestStatus::turn_complete,
              "continue_with: the request's current turn is not complete");
    OGX_CHECK(r.finish_ != FinishReason::error, "continue_with: the request failed: ", r.error_);
    OGX_CHECK(!tokens.empty(), "continue_with: no tokens given");
    check_ids(tokens, model_->io().vocab_size, "continue_with");
    const size_t length = r.input_total_ + r.generated_total_ + tokens.size();
    const int ml = max_length_of(r.params_);
    OGX_CHECK(length < (size_t)ml, "continue_with: the sequence's ", length, " tokens leave no room below max_length ",
              ml);
    auto it = std::find_if(parked_.begin(), parked_.end(), [&](auto& p) { return p.get() == &r; });
    OGX_CHECK(it != parked_.end(), "continue_with: the request is not in this engine");
    r.input_ = tokens;
    r.input_done_ = 0;
    r.input_total_ += tokens.size();
    r.status_ = RequestStatus::queued;
    r.finish_ = FinishReason::none;
    queued_.push_back(*it);
    parked_.erase(it);
  }
  pending_cv_.notify_all();
}

void Engine::remove_request(const std::shared_ptr<Request>& request) {
  OGX_CHECK(request, "remove_request: no request");
  Request& r = *request;
  std::unique_ptr<Generator> gen;
  {
    std::lock_guard<std::mutex> lk(mu_);
    std::lock_guard<std::mutex> rl(r.mu_);
    if (r.status_ == RequestStatus::closed) return;
    OGX_CHECK(r.engine_ == this, "remove_request: the request is not in this engine");
    if (r.status_ != RequestStatus::turn_complete) r.finish_ = FinishReason::removed;
    r.status_ = RequestStatus::closed;
    r.engine_ = nullptr;
    auto drop = [&](auto& list) {
      list.erase(std::remove_if(list.begin(), list.end(), [&](auto& p) { return p.get() == &r; }), list.end());
    };
    drop(queued_);
    drop(running_);
    drop(parked_);
    drop(ready_);
    if (!r.in_step_) gen = std::move(r.gen_);  // else the step frees it when it ends
    r.cv_.notify_all();
  }
  free_generator(std::move(gen));
}

void Engine::free_generator(std::unique_ptr<Generator> gen) {
  if (!gen) return;
  // A generator may leave a queued step in the model's session: destroyed under the model's lock.
  std::unique_lock<std::mutex> ml(model_lock(), std::try_to_lock);
  if (ml.owns_lock()) {
    gen.reset();
    return;
  }
  std::lock_guard<std::mutex> lk(mu_);
  deferred_free_.push_back(std::move(gen));  // the running step frees it when its forward passes are done
}

bool Engine::pending_locked() const { return !queued_.empty() || !running_.empty() || !ready_.empty(); }

bool Engine::has_pending_requests() const {
  std::lock_guard<std::mutex> lk(mu_);
  return pending_locked();
}

bool Engine::wait_for_pending(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lk(mu_);
  return pending_cv_.wait_for(lk, timeout, [&] { return pending_locked(); });
}

void Engine::notify() { pending_cv_.notify_all(); }

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  EngineStats s = stats_;
  s.queued = queued_.size();
  s.running = running_.size();
  return s;
}

void Engine::end_turn_locked(Request& r, FinishReason why, const std::string& error) {
  r.status_ = RequestStatus::turn_complete;
  r.finish_ = why;
  r.error_ = error;
  r.cv_.notify_all();
}

std::shared_ptr<Request> Engine::step() {
  std::lock_guard<std::mutex> step_lock(step_mu_);
  for (;;) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (!ready_.empty()) {
        auto r = std::move(ready_.front());
        ready_.pop_front();
        return r;  // removed requests were taken out of ready_ by remove_request
      }
      if (queued_.empty() && running_.empty()) return nullptr;
    }
    run_one_step();
  }
}

}  // namespace ogx::genai
