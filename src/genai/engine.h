// Engine and Request: continuous batching over generators, with ONNX Runtime GenAI's Engine / Request shape
// (upstream src/engine/engine.h, request.h).
//
// A Request carries one sequence (batch_size 1, one beam) with its own GeneratorParams (search options, seed,
// max_length / min_length). The caller adds its prompt (add_tokens) and hands it to an Engine (add_request).
// Engine::step() advances every request of the running set by one step and returns one request that has new
// tokens (or finished its turn); requests join and leave the running set at every step:
//   - a queued request is admitted when the running set has fewer than max_batch requests; its generator (and so
//     its KV cache) is created then and freed when it is removed;
//   - a request's prompt runs in chunks: at most prefill_chunk prompt tokens over all requests per step, so a long
//     prompt does not stall the others' decode (the step of a chunk that ends the prompt also picks the first
//     token);
//   - every request past its prompt gets one token per step (step_generators, engine_step.cpp: one batched forward
//     pass over their generators), before the step's prompt chunks run; in a step without prompt chunks that pass
//     queues the next step on the device (where every row picks there: decode_together), so the device does not wait
//     for the engine's bookkeeping between steps; the next step takes its tokens from it (or drops it when the
//     running set changed);
//   - a request whose turn completed (EOS, max_length) leaves the running set but keeps its generator: its tokens
//     stay readable and continue_with() queues another turn over the same sequence (a chat's next turn);
//   - remove_request() closes a request at any time; its generator is freed at once, or, while a step runs the
//     model, at the end of that step (a removing thread never waits for a forward pass).
// Threads: one thread calls step(); any threads may add, remove and continue requests, and read a request's tokens
// (get_unseen_token, wait) while the engine runs. A step's error in one request ends that request's turn with
// finish reason `error` and its message; the other requests continue.
// Lifetime: an Engine must outlive the calls on its requests; destroying it closes every request it holds.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "genai/adapters.h"
#include "genai/generator.h"

namespace ogx::genai {

enum class RequestStatus {
  unassigned,     // created: add_tokens, then Engine::add_request
  queued,         // added (or continued): waits for a place in the running set
  active,         // in the running set: prompt chunks, then one token per step
  turn_complete,  // stopped (EOS, max_length, error): tokens readable, continue_with() starts another turn
  closed,         // removed: nothing more happens, the generator is freed
};

enum class FinishReason { none, eos, length, error, removed };
const char* finish_reason_name(FinishReason r);  // "none", "eos", "length", "error", "removed"

class Engine;

class Request {
 public:
  // Checks what the engine cannot run: batch_size and num_beams other than 1.
  explicit Request(const GeneratorParams& params);
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  // The prompt; only before the request is added to an engine (may be called more than once: the ids add up).
  void add_tokens(const std::vector<int32_t>& tokens);
  // Another turn after the current one completed (status turn_complete): the tokens follow the sequence so far.
  void continue_with(const std::vector<int32_t>& tokens);

  bool has_unseen_tokens() const;
  // The oldest generated token not yet returned; throws when there is none.
  int32_t get_unseen_token();
  // Moves every unseen token into `out` (appended); returns how many.
  size_t take_unseen_tokens(std::vector<int32_t>& out);
  bool is_turn_complete() const;  // turn_complete or closed
  RequestStatus status() const;
  FinishReason finish_reason() const;
  std::string error() const;  // the message of finish reason `error`
  // Waits until the request has unseen tokens or its turn is complete, or the timeout passes; true: either holds.
  bool wait(std::chrono::milliseconds timeout) const;

  // Counts over every turn: tokens the caller gave, tokens generated.
  size_t input_token_count() const;
  size_t generated_token_count() const;

  // Activates loaded adapter `name` (adapters.h) for this request: its generator runs with the adapter's
  // parameters (Generator::set_active_adapter). Only before the request is added to an engine, once; throws when
  // the adapter is not loaded. The adapter cannot be unloaded while the request lives. Requests with different
  // adapters (or none) share an engine: those with the same adapter share model runs, each adapter its own
  // (decode_together, batch_step.h).
  void set_active_adapter(const std::shared_ptr<Adapters>& adapters, const std::string& name);
  const std::string& adapter_name() const { return adapter_name_; }  // "" : none

  // Application data the engine never reads (upstream's opaque data).
  void set_opaque_data(void* data);
  void* opaque_data() const;
  const GeneratorParams& params() const { return params_; }

 private:
  friend class Engine;
  // Its generator, with its adapter active (the engine calls it on admission, under the model lock).
  std::unique_ptr<Generator> make_generator(const std::shared_ptr<const Model>& model) const;
  const GeneratorParams params_;
  std::shared_ptr<Adapters> adapters_;          // set_active_adapter (null: none); fixed once the request is added
  std::string adapter_name_;
  std::unique_ptr<AdapterLease> adapter_lease_;  // keeps the adapter loaded while the request lives
  mutable std::mutex mu_;  // everything below; taken after the engine's lock when both are held
  mutable std::condition_variable cv_;
  RequestStatus status_ = RequestStatus::unassigned;
  FinishReason finish_ = FinishReason::none;
  std::string error_;
  std::vector<int32_t> input_;      // this turn's input ids ...
  size_t input_done_ = 0;           // ... of which the model has run this many
  std::deque<int32_t> unseen_;      // generated ids not yet read
  size_t input_total_ = 0, generated_total_ = 0;
  void* opaque_ = nullptr;
  Engine* engine_ = nullptr;        // the engine it was added to (null: none)
  // Owned by the engine: created on admission, freed on removal. Touched by the stepping thread during a step,
  // otherwise under the engine's lock.
  std::unique_ptr<Generator> gen_;
  bool in_step_ = false;            // the running step uses gen_ (engine's lock)
};

struct EngineOptions {
  int max_batch = 16;       // requests in the running set (others wait queued)
  int prefill_chunk = 256;  // prompt tokens run per step, over all requests (at least one request progresses)
  // Held around every generator creation, forward pass and destruction (the C API passes the model's lock that
  // serializes the generators sharing a model); null: the engine's own.
  std::mutex* model_lock = nullptr;
};

// Counters for metrics (a snapshot).
struct EngineStats {
  size_t queued = 0;          // requests waiting for a place in the running set
  size_t running = 0;         // requests in the running set
  size_t last_batch = 0;      // generators that picked a token in the latest step
  uint64_t steps = 0;         // steps that ran the model
  uint64_t prompt_tokens = 0;     // prompt tokens run
  uint64_t generated_tokens = 0;  // tokens picked
  // Where the steps' time went (seconds, summed over steps): the whole steps; waiting for the model lock; the
  // decoding requests' model run (step_generators: inputs, the run, the picks); the prompt chunks' runs (with the
  // first token of each prompt that completed). The rest of step_seconds is the engine's bookkeeping.
  double step_seconds = 0, lock_wait_seconds = 0, decode_seconds = 0, prompt_seconds = 0;
  // The model session's counters (Session::stats: runs, queued and dropped runs, submits, ...), copied under the
  // model lock at most every 200 ms and whenever the engine runs out of requests.
  std::vector<std::pair<std::string, double>> session;
};

class Engine {
 public:
  explicit Engine(std::shared_ptr<const Model> model, EngineOptions options = {});
  ~Engine();  // closes every request it holds
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request with its prompt; throws (naming the problem) for an empty prompt, ids outside the
  // vocabulary, a prompt that leaves no room below max_length, or a request already added.
  void add_request(const std::shared_ptr<Request>& request);
  // Several requests at once: all are queued together (and so admitted in the same step when there is room), or,
  // when one is refused, none.
  void add_requests(const std::vector<std::shared_ptr<Request>>& requests);
  // Closes a request (a no-op for one already closed); throws when it belongs to another engine.
  void remove_request(const std::shared_ptr<Request>& request);
  // Returns a request with new tokens or a completed turn: one left from the previous step, else runs steps
  // until one has; null when nothing is pending.
  std::shared_ptr<Request> step();
  bool has_pending_requests() const;  // queued or running requests, or ready ones step() has not returned
  // Waits until a request is pending or the timeout passes (for a stepping thread that sleeps when idle).
  bool wait_for_pending(std::chrono::milliseconds timeout) const;
  // Wakes wait_for_pending (e.g. at shutdown).
  void notify();
  EngineStats stats() const;
  const Model& model() const { return *model_; }
  const EngineOptions& options() const { return options_; }
  // The sequence's max_length for these params: search max_length (0: context_length), at most context_length.
  int max_length_of(const GeneratorParams& params) const;

 private:
  friend class Request;
  void continue_request(Request& r, const std::vector<int32_t>& tokens);  // Request::continue_with
  bool pending_locked() const;
  struct StepWork;  // engine_step.cpp
  void run_one_step();  // one model step over the running set
  std::vector<StepWork> admit_and_plan();           // admission, and what each running request does this step
  size_t run_decoders(std::vector<StepWork>& work);  // the requests past their prompt: one token each; returns how many
  void run_prompts(std::vector<StepWork>& work);     // the prompt chunks (and a completed prompt's first token)
  // Frees a generator under the model lock: now when the lock is free, else (a step is running the model) at the
  // end of that step, so a thread removing a request never waits for a forward pass.
  void free_generator(std::unique_ptr<Generator> gen);
  std::mutex& model_lock() { return options_.model_lock ? *options_.model_lock : own_model_lock_; }
  // Ends a request's turn (engine lock held); `error` for finish reason error.
  static void end_turn_locked(Request& r, FinishReason why, const std::string& error = "");

  std::shared_ptr<const Model> model_;
  EngineOptions options_;
  mutable std::mutex mu_;  // the lists below and the requests' status / gen_ ownership
  mutable std::condition_variable pending_cv_;
  std::mutex step_mu_;     // one step() at a time
  std::mutex own_model_lock_;  // model_lock() when the options give none
  std::vector<std::unique_ptr<Generator>> deferred_free_;  // generators free_generator could not free at once
  std::deque<std::shared_ptr<Request>> queued_;
  std::vector<std::shared_ptr<Request>> running_;  // admission order
  std::vector<std::shared_ptr<Request>> parked_;   // turn complete, generator kept for continue_with
  std::deque<std::shared_ptr<Request>> ready_;     // have news for step() to return
  EngineStats stats_;
  std::chrono::steady_clock::time_point session_stats_at_{};  // when stats_.session was last copied
};

// The seam for batched decode: picks the next token of every generator (each past its prompt, not done) with one
// batched model run (decode_together; queue_ahead as there: the run queues the next step on the device).
// errors[i] is the message of generator i's failure ("" when it succeeded).
void step_generators(const std::vector<Generator*>& active, std::vector<std::string>& errors,
                     bool queue_ahead = false);

}  // namespace ogx::genai
