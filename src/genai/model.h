// A loaded model: its config, the ONNX graph, the session of the chosen provider, and the facts about the
// decoder's I/O that the generator needs (KV dtype and shape, which optional inputs exist).
#pragma once
#include <memory>
#include <string>

#include "exec/session.h"
#include "genai/config.h"

namespace ogx::genai {

struct DecoderIO {
  DType input_ids_dtype = DType::i64;
  DType mask_dtype = DType::i64;
  DType position_dtype = DType::i64;
  bool has_attention_mask = false;
  bool has_position_ids = false;
  DType kv_dtype = DType::f32;
  bool combined_kv = false;  // one [2, B, Nkv, L, H] tensor per layer (DecoderConfig::past_names)
  DType logits_dtype = DType::f32;
  int num_layers = 0;
  int kv_heads = 0;   // per layer
  int head_size = 0;
  int vocab_size = 0;
  bool pruned_logits = false;  // the logits output declares one position (last-token-only logits)
  DType hidden_states_dtype = DType::undefined;  // of model.decoder.inputs.hidden_states, when the config names one
};

class Model {
 public:
  static std::shared_ptr<Model> load(const Config& config);
  static std::shared_ptr<Model> load(const std::string& model_dir) { return load(Config::load(model_dir)); }
  // A decoder graph already in memory (e.g. built with random weights for a benchmark).
  // share_device_with: a session whose device the model's session shares when the provider can (a target beside
  // its draft model).
  static std::shared_ptr<Model> load(const Config& config, std::shared_ptr<const ogx::Model> graph,
                                     const Session* share_device_with = nullptr);

  const Config& config() const { return config_; }
  Session& session() const { return *session_; }
  const DecoderIO& io() const { return io_; }
  const std::string& provider() const { return provider_; }  // "cpu" or "vulkan"
  std::string device_type() const { return provider_ == "cpu" ? "cpu" : "gpu"; }
  const std::string& type() const { return config_.model.type; }
  // The draft model of speculative decoding (config model.draft), on the same provider; null when none.
  std::shared_ptr<const Model> draft() const { return draft_; }

 private:
  std::shared_ptr<const Model> draft_;
  Config config_;
  std::unique_ptr<Session> session_;
  DecoderIO io_;
  std::string provider_;
};

// Errors unless two model folders' tokenizers have the same vocabulary (tokenizer.json's model.vocab and the ids of
// its added_tokens, else the bytes of tokenizer.model; folders without either are not compared): a draft must speak
// the target's token ids.
void check_same_vocabulary(const std::string& target_dir, const std::string& draft_dir);

// Expands a genai_config.json name template ("present.%d.key") for layer i; throws when it has no %d.
std::string layer_name(const std::string& pattern, int i);

// Builds the provider's session; defined by the provider table (provider_table.cpp).
std::unique_ptr<Session> create_provider_session(const std::string& canonical_provider,
                                                 std::shared_ptr<const ogx::Model> model, const SessionOptions& opts);
std::vector<std::string> available_providers();

}  // namespace ogx::genai
