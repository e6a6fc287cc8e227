#include "builder/genai_config_writer.h"

#include <algorithm>

#include "common/error.h"

using nlohmann::json;

namespace ogx::builder {

namespace {

constexpr int64_t kDefaultMaxLength = 4096;

json gen_value(const HfConfig& c, const char* key, json def) {
  if (c.generation.is_object() && c.generation.contains(key) && !c.generation[key].is_null()) return c.generation[key];
  return def;
}

json provider_options(Provider p) {
  if (p == Provider::dml) return json::array({{{"dml", {{"enable_graph_capture", "1"}}}}});
  if (p == Provider::vulkan) return json::array({{{"vulkan", json::object()}}});
  return json::array();
}

json decoder(const HfConfig& c, Provider p) {
  json inputs = {{"input_ids", "input_ids"}, {"attention_mask", "attention_mask"}};
  if (p != Provider::cpu) inputs["position_ids"] = "position_ids";
  inputs["past_key_names"] = "past_key_values.%d.key";
  inputs["past_value_names"] = "past_key_values.%d.value";
  return {{"session_options", {{"log_id", "onnxruntime-genai"}, {"provider_options", provider_options(p)}}},
          {"filename", "model.onnx"},
          {"head_size", c.head_dim},
          {"hidden_size", c.hidden},
          {"inputs", inputs},
          {"outputs",
           {{"logits", "logits"}, {"present_key_names", "present.%d.key"}, {"present_value_names", "present.%d.value"}}},
          {"num_attention_heads", c.heads},
          {"num_hidden_layers", c.layers},
          {"num_key_value_heads", c.kv_heads}};
}

}  // namespace

json make_genai_config(const HfConfig& c, Provider provider, int64_t max_length) {
  if (max_length < 0) throw_error("--max-length must be positive, got ", max_length);
  if (max_length == 0) max_length = std::min(c.max_position, kDefaultMaxLength);
  json eos = c.eos.size() == 1 ? json(c.eos[0]) : json(c.eos);
  int64_t pad = c.pad ? *c.pad : (c.eos.empty() ? 0 : c.eos[0]);
  json model = {{"bos_token_id", c.bos},      {"context_length", c.max_position}, {"decoder", decoder(c, provider)},
                {"eos_token_id", eos},        {"pad_token_id", pad},               {"type", c.genai_type},
                {"vocab_size", c.vocab}};
  json search = {{"diversity_penalty", gen_value(c, "diversity_penalty", 0.0)},
                 {"do_sample", gen_value(c, "do_sample", false)},
                 {"early_stopping", true},
                 {"length_penalty", gen_value(c, "length_penalty", 1.0)},
                 {"max_length", max_length},
                 {"min_length", 0},
                 {"no_repeat_ngram_size", gen_value(c, "no_repeat_ngram_size", 0)},
                 {"num_beams", gen_value(c, "num_beams", 1)},
                 {"num_return_sequences", gen_value(c, "num_return_sequences", 1)},
                 {"past_present_share_buffer", true},
                 {"repetition_penalty", gen_value(c, "repetition_penalty", 1.0)},
                 {"temperature", gen_value(c, "temperature", 1.0)},
                 {"top_k", gen_value(c, "top_k", 50)},
                 {"top_p", gen_value(c, "top_p", 1.0)}};
  return {{"model", model}, {"search", search}};
}

}  // namespace ogx::builder
