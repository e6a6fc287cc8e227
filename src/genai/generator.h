// Generator: runs the decoder over a growing sequence, as onnxruntime_genai's Generator does.
// append_tokens runs the model on new tokens; generate_next_token picks a token from the current logits and
// feeds it back on the next call. Batch size 1.
// With greedy picking on the device, a provider that can (Session::queue_next) runs one step ahead: each
// generate_next_token queues the step of the token it is about to return before it waits for that token, so the
// device does not wait for the host between tokens. A queued step past the end (after EOS, at max_length) or
// before any other call (append_tokens, set_logits, rewind_to, logits) is dropped: tokens are the same either way.
#pragma once
#include <memory>
#include <vector>

#include "genai/kv_cache.h"
#include "genai/model.h"
#include "genai/search.h"

namespace ogx::genai {

struct GeneratorParams {
  SearchConfig search;
  explicit GeneratorParams(const Model& m) : search(m.config().search) {}
  // Sets a numeric or boolean search option by its genai_config.json name; throws for unknown names.
  void set_search_option(const std::string& name, double value);
};

class Generator {
 public:
  Generator(std::shared_ptr<const Model> model, const GeneratorParams& params);
  ~Generator();
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  void append_tokens(const std::vector<int32_t>& ids);
  void generate_next_token();
  bool is_done() const;
  const std::vector<int32_t>& sequence() const { return sequence_; }
  int32_t last_token() const { return sequence_.empty() ? -1 : sequence_.back(); }
  size_t token_count() const { return sequence_.size(); }
  // Logits of the last position of the latest run, fp32 [vocab] (fetched from the device when a step sampled there).
  const std::vector<float>& logits() const;
  // True when next tokens are picked on the provider's device (greedy or top-k/top-p/temperature without
  // repetition penalty or n-gram bans): only token ids come back each step.
  bool samples_on_device() const { return device_sampling_; }
  void set_logits(const std::vector<float>& logits);
  void rewind_to(size_t length);
  int max_length() const { return max_length_; }

 private:
  void run(const std::vector<int32_t>& ids, bool want_logits = true);  // forward pass over new tokens
  // The inputs of a forward pass over `ids` after `past` positions (no KV bindings).
  std::vector<NamedTensor> step_inputs(const std::vector<int32_t>& ids, int64_t past) const;
  // Queues the forward pass of the token the next sampling returns (at position kv length + 1); false: not queued.
  bool queue_step();
  void drop_queued() const;  // waits for queued steps and forgets them (their tokens stay pending)
  // Before a forward pass or a read of the device's logits: makes a session-owned KV cache hold this generator's
  // positions (re-running them when another generator of the model used the cache since).
  void take_kv_cache() const;
  std::shared_ptr<const Model> model_;
  SearchConfig search_;
  int max_length_;
  mutable KvCache kv_;
  Sampler sampler_;
  std::vector<int32_t> sequence_;
  std::vector<int32_t> pending_;  // tokens in the sequence not yet run through the model
  mutable std::vector<float> logits_;
  mutable bool logits_on_device_ = false;  // the latest run left its logits on the device
  bool device_sampling_ = false;
  DeviceSampling sampling_;  // what it asked the session for (device_sampling_)
  mutable int queued_ = 0;  // 1: the pending token's forward pass is queued in the session (Session::queue_next)
};

}  // namespace ogx::genai
