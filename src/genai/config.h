// genai_config.json: the model folder's description of the decoder graph, its I/O names, session options and
// search defaults. Unknown keys produce a warning (newer builders add keys); wrong types or values are errors
// naming the JSON path.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "exec/session.h"
#include "onnx/loader.h"

namespace ogx::genai {

struct ProviderEntry {
  std::string name;                 // as written: "dml", "vulkan", "cuda", "cpu", ...
  OptionList options;               // that provider's key/values
  OptionList device_filtering;      // device_filtering_options of the same entry
};

struct SessionConfig {
  std::optional<int> intra_op_num_threads;
  std::string log_id;
  std::vector<ProviderEntry> providers;  // order of preference; empty = CPU
};

struct DecoderConfig {
  std::string filename = "model.onnx";
  int head_size = 0, hidden_size = 0, num_attention_heads = 0, num_hidden_layers = 0, num_key_value_heads = 0;
  int sliding_window = 0;
  bool slide_key_value_cache = false;  // sliding_window.slide_key_value_cache: the ONNX model's cache slides
  std::vector<std::string> layer_types;  // LFM2's hybrid layers (conv / attention): not supported, named in errors
  SessionConfig session;
  // inputs
  std::string input_ids = "input_ids", attention_mask = "attention_mask", position_ids = "position_ids";
  std::string past_key_names = "past_key_values.%d.key", past_value_names = "past_key_values.%d.value";
  // The combined layout of GPT-2 exports (inputs.past_names / outputs.present_names, e.g. "past_%d"): one tensor per
  // layer, [2, batch, kv_heads, length, head_size] (key, then value). Empty: separate key and value tensors.
  std::string past_names, present_names;
  // inputs.hidden_states: a [batch, tokens, hidden_size] input the caller feeds before each run
  // (Generator::set_hidden_states; e.g. an MTP head fed the main model's last hidden state). Empty: none.
  std::string hidden_states_input;
  // outputs.hidden_states: the last hidden state output (exported with include_hidden_states), kept from each run
  // for get_output on every provider. Empty: none named.
  std::string hidden_states_output;
  // outputs
  std::string logits = "logits";
  std::string present_key_names = "present.%d.key", present_value_names = "present.%d.value";
};

struct ModelConfig {
  std::string type;
  int bos_token_id = -1;
  std::vector<int> eos_token_ids;
  int pad_token_id = -1;
  // Tool-call (bot/eot) and reasoning (bor/eor) markers; -1: not set (the tokenizer's vocabulary may have them).
  int bot_token_id = -1, eot_token_id = -1, bor_token_id = -1, eor_token_id = -1;
  int context_length = 0;
  int vocab_size = 0;
  DecoderConfig decoder;
  // model.draft: the draft model of speculative decoding, a decoder block like model.decoder (its filename relative
  // to the folder; session_options default to the decoder's). Set: generators draft with it (genai/speculative.h).
  std::optional<DecoderConfig> draft;
};

// genai_config.json's "speculative" section (ONNX Runtime GenAI's keys): GeneratorParams' defaults.
struct SpeculativeConfig {
  int max_draft_tokens = 4;           // drafted tokens per round, 1..16
  int ngram_size = 0;                 // n-gram (prompt-lookup) drafting: 0 off, else 2..16 (the key: the last N - 1)
  bool ngram_chained_lookup = false;  // n-gram: look up again after each proposed token (speculative_policy.h)
  int min_adaptive_k = 0;             // > 0: adaptive draft width from this floor up to 16; 0: max_draft_tokens
  bool cooldown = false;              // one standard step after three zero-accept rounds at the minimum width
};

struct SearchConfig {
  bool do_sample = false;
  int max_length = 0;  // 0: context_length
  int min_length = 0;
  int num_beams = 1;
  int num_return_sequences = 1;
  bool past_present_share_buffer = true;
  double repetition_penalty = 1.0;
  // OpenAI's penalties over the tokens generated after the latest prompt (search.h): [-2, 2], 0 = off.
  double presence_penalty = 0.0;
  double frequency_penalty = 0.0;
  double temperature = 1.0;
  int top_k = 50;
  double top_p = 1.0;
  bool early_stopping = true;
  double length_penalty = 1.0;
  int no_repeat_ngram_size = 0;
  double diversity_penalty = 0.0;
  int64_t random_seed = -1;  // -1: nondeterministic
  int batch_size = 1;
};

// Sampling temperature rule: a finite value >= kMinTemperature. Below it logits / temperature overflow float32
// (1e-45 would pass "> 0" and sample garbage); greedy search is do_sample=false, not a tiny temperature.
inline constexpr double kMinTemperature = 1e-6;
void check_temperature(double t, const std::string& what);  // throws naming `what`
// presence_penalty / frequency_penalty: finite, in [-kMaxTokenPenalty, kMaxTokenPenalty] (OpenAI's range); throws
// naming prefix + the option.
inline constexpr double kMaxTokenPenalty = 2.0;
void check_token_penalties(const SearchConfig& s, const std::string& prefix);

struct Config {
  std::string model_dir;
  ModelConfig model;
  SearchConfig search;
  SpeculativeConfig speculative;
  // Model files held in memory (Config.add_model_data): file name -> bytes, used instead of the folder's file of
  // that name (the decoder's filename, or an external-data location).
  MemoryBlobs model_data;

  static Config load(const std::string& model_dir);  // reads MODEL_DIR/genai_config.json
  static Config parse(const std::string& json_text, const std::string& model_dir);
  // Applies a JSON overlay (same schema, partial) on top of this config.
  void overlay(const std::string& json_text);

  void clear_providers();
  // Any name is accepted here (as ONNX Runtime GenAI does); an unknown one is an error when the model is created.
  void append_provider(const std::string& name);
  // Sets a provider option, appending the provider if absent. Device filtering keys go to device_filtering.
  void set_provider_option(const std::string& provider, const std::string& key, const std::string& value);
};

// "dml" and "vulkan" name the same provider; returns the canonical name ("cpu", "vulkan") or throws listing the
// known ones.
std::string canonical_provider(const std::string& name);
bool is_device_filtering_key(const std::string& key);

}  // namespace ogx::genai
