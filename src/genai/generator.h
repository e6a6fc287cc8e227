// Generator: runs the decoder over a growing sequence, as onnxruntime_genai's Generator does.
// append_tokens runs the model on new tokens; generate_next_token picks a token from the current logits and
// feeds it back on the next call. Batch size 1.
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
  std::shared_ptr<const Model> model_;
  SearchConfig search_;
  int max_length_;
  KvCache kv_;
  Sampler sampler_;
  std::vector<int32_t> sequence_;
  std::vector<int32_t> pending_;  // tokens in the sequence not yet run through the model
  mutable std::vector<float> logits_;
  mutable bool logits_on_device_ = false;  // the latest run left its logits on the device
  bool device_sampling_ = false;
};

}  // namespace ogx::genai
