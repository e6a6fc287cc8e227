#include "genai/config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/checked.h"
#include "common/error.h"
#include "common/json_limits.h"
#include "common/log.h"

namespace ogx::genai {
namespace {

using json = nlohmann::json;

// Walks one JSON object: typed reads with the JSON path in every error, and a warning for keys nobody read.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) throw_error("genai_config.json: ", path_, " must be an object");
  }
  void done() {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!seen_.count(it.key())) log_warning("genai_config.json: unknown key " + path_ + "." + it.key() + " ignored");
  }
  bool has(const std::string& k) {
    seen_.insert(k);
    return j_.contains(k) && !j_[k].is_null();
  }
  const json& at(const std::string& k) {
    seen_.insert(k);
    return j_.at(k);
  }
  std::string p(const std::string& k) const { return path_ + "." + k; }

  template <typename T>
  void get(const std::string& k, T& out) {
    if (!has(k)) return;
    const json& v = j_.at(k);
    try {
      if constexpr (std::is_same_v<T, bool>) {
        if (v.is_boolean()) out = v.get<bool>();
        else if (v.is_number_integer()) out = v.get<int64_t>() != 0;
        else throw std::runtime_error("expected a boolean");
      } else if constexpr (std::is_integral_v<T>) {
        if (!v.is_number_integer()) {
          if (v.is_number_float() && double_to_int(v.get<double>(), out)) return;
          throw std::runtime_error(v.is_number_float() ? "expected an integer in range" : "expected an integer");
        }
        // Unsigned values above INT64_MAX would wrap in get<int64_t>().
        if (v.is_number_unsigned() && v.get<uint64_t>() > (uint64_t)std::numeric_limits<int64_t>::max())
          throw std::runtime_error("integer out of range");
        int64_t x = v.get<int64_t>();
        if (x < (int64_t)std::numeric_limits<T>::min() || x > (int64_t)std::numeric_limits<T>::max())
          throw std::runtime_error("integer out of range");
        out = (T)x;
      } else if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number()) throw std::runtime_error("expected a number");
        out = v.get<T>();
      } else {
        if (!v.is_string()) throw std::runtime_error("expected a string");
        out = v.get<std::string>();
      }
    } catch (const std::exception& e) {
      throw_error("genai_config.json: ", p(k), ": ", json_error_text(e), ", got ", json_excerpt(v.dump()));
    }
  }

 private:
  const json& j_;
  std::string path_;
  std::set<std::string> seen_;
};

std::string option_value(const json& v, const std::string& path) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) {
    std::ostringstream os;
    os << v.get<double>();
    return os.str();
  }
  throw_error("genai_config.json: ", path, " must be a string, number or boolean");
}

OptionList read_options(const json& j, const std::string& path) {
  OGX_CHECK(j.is_object(), "genai_config.json: ", path, " must be an object");
  OptionList out;
  for (auto it = j.begin(); it != j.end(); ++it) out.emplace_back(it.key(), option_value(it.value(), path + "." + it.key()));
  return out;
}

void read_providers(const json& list, const std::string& path, std::vector<ProviderEntry>& out) {
  OGX_CHECK(list.is_array(), "genai_config.json: ", path, " must be an array");
  out.clear();
  for (size_t i = 0; i < list.size(); i++) {
    std::string ip = path + "[" + std::to_string(i) + "]";
    OGX_CHECK(list[i].is_object(), "genai_config.json: ", ip, " must be an object");
    ProviderEntry e;
    for (auto it = list[i].begin(); it != list[i].end(); ++it) {
      if (it.key() == "device_filtering_options") {
        e.device_filtering = read_options(it.value(), ip + ".device_filtering_options");
      } else {
        OGX_CHECK(e.name.empty(), "genai_config.json: ", ip, " names two providers ('", e.name, "', '", it.key(), "')");
        e.name = it.key();
        e.options = read_options(it.value(), ip + "." + it.key());
      }
    }
    OGX_CHECK(!e.name.empty(), "genai_config.json: ", ip, " names no provider");
    out.push_back(std::move(e));
  }
}

void read_session(const json& j, const std::string& path, SessionConfig& s) {
  ObjectReader r(j, path);
  if (r.has("intra_op_num_threads")) {
    int n = 0;
    r.get("intra_op_num_threads", n);
    OGX_CHECK(n >= 0, "genai_config.json: ", r.p("intra_op_num_threads"), " must be >= 0");
    s.intra_op_num_threads = n;
  }
  r.get("log_id", s.log_id);
  if (r.has("provider_options")) read_providers(r.at("provider_options"), r.p("provider_options"), s.providers);
  // ONNX Runtime session settings that have no effect here are accepted silently.
  for (const char* k : {"enable_mem_pattern", "enable_cpu_mem_arena", "graph_optimization_level", "log_severity_level",
                        "inter_op_num_threads", "enable_profiling", "custom_ops_library", "config_entries"})
    r.has(k);
  r.done();
}

void read_decoder(const json& j, const std::string& path, DecoderConfig& d) {
  ObjectReader r(j, path);
  r.get("filename", d.filename);
  r.get("head_size", d.head_size);
  r.get("hidden_size", d.hidden_size);
  r.get("num_attention_heads", d.num_attention_heads);
  r.get("num_hidden_layers", d.num_hidden_layers);
  r.get("num_key_value_heads", d.num_key_value_heads);
  if (r.has("sliding_window")) {
    const json& sw = r.at("sliding_window");
    if (sw.is_object()) {
      ObjectReader s(sw, r.p("sliding_window"));
      s.get("window_size", d.sliding_window);
      s.get("slide_key_value_cache", d.slide_key_value_cache);
      for (const char* k : {"pad_value", "alignment", "slide_inputs"}) s.has(k);
      s.done();
    }
  }
  if (r.has("session_options")) read_session(r.at("session_options"), r.p("session_options"), d.session);
  if (r.has("inputs")) {
    ObjectReader in(r.at("inputs"), r.p("inputs"));
    in.get("input_ids", d.input_ids);
    in.get("attention_mask", d.attention_mask);
    in.get("position_ids", d.position_ids);
    in.get("past_key_names", d.past_key_names);
    in.get("past_value_names", d.past_value_names);
    in.get("past_names", d.past_names);
    in.get("hidden_states", d.hidden_states_input);
    for (const char* k : {"inputs_embeds", "cache_indirection", "past_sequence_length",
                          "current_sequence_length", "total_sequence_length", "encoder_hidden_states"})
      in.has(k);
    in.done();
  }
  if (r.has("outputs")) {
    ObjectReader out(r.at("outputs"), r.p("outputs"));
    out.get("logits", d.logits);
    out.get("present_key_names", d.present_key_names);
    out.get("present_value_names", d.present_value_names);
    out.get("present_names", d.present_names);
    out.get("hidden_states", d.hidden_states_output);
    out.has("output_cross_qk_names");
    out.done();
  }
  if (r.has("layer_types")) {
    OGX_CHECK(r.at("layer_types").is_array(), "genai_config.json: ", r.p("layer_types"), " must be a list");
    for (const json& t : r.at("layer_types")) d.layer_types.push_back(t.is_string() ? t.get<std::string>() : t.dump());
  }
  for (const char* k : {"pipeline", "run_options", "rotary_embedding"}) r.has(k);
  r.done();
  OGX_CHECK(d.num_hidden_layers >= 0 && d.head_size >= 0 && d.num_key_value_heads >= 0, "genai_config.json: ", path,
            ": negative sizes");
}

void read_model(const json& j, ModelConfig& m) {
  ObjectReader r(j, "model");
  r.get("type", m.type);
  r.get("bos_token_id", m.bos_token_id);
  r.get("pad_token_id", m.pad_token_id);
  r.get("bot_token_id", m.bot_token_id);
  r.get("eot_token_id", m.eot_token_id);
  r.get("bor_token_id", m.bor_token_id);
  r.get("eor_token_id", m.eor_token_id);
  r.get("context_length", m.context_length);
  r.get("vocab_size", m.vocab_size);
  if (r.has("eos_token_id")) {
    const json& e = r.at("eos_token_id");
    m.eos_token_ids.clear();
    // Token ids are int32 in the core: a larger value is an error, never truncated.
    auto token_id = [](const json& x) {
      OGX_CHECK(x.is_number_integer(), "genai_config.json: model.eos_token_id must hold integers, got ",
                json_excerpt(x.dump()));
      const bool fits = x.is_number_unsigned() ? x.get<uint64_t>() <= (uint64_t)std::numeric_limits<int32_t>::max()
                                               : x.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                                                     x.get<int64_t>() <= std::numeric_limits<int32_t>::max();
      OGX_CHECK(fits, "genai_config.json: model.eos_token_id ", x.dump(), " is out of the int32 range of token ids");
      return (int)x.get<int64_t>();
    };
    if (e.is_number_integer()) m.eos_token_ids.push_back(token_id(e));
    else if (e.is_array()) {
      for (auto& x : e) m.eos_token_ids.push_back(token_id(x));
    } else throw_error("genai_config.json: model.eos_token_id must be an integer or a list, got ",
                       json_excerpt(e.dump()));
  }
  if (r.has("decoder")) read_decoder(r.at("decoder"), "model.decoder", m.decoder);
  if (r.has("draft")) {
    m.draft = DecoderConfig();
    read_decoder(r.at("draft"), "model.draft", *m.draft);
    OGX_CHECK(r.at("draft").is_object() && r.at("draft").contains("filename"),
              "genai_config.json: model.draft.filename is not set");
  }
  for (const char* k : {"sep_token_id", "decoder_start_token_id", "image_token_id", "vision", "embedding", "speech",
                        "encoder", "prompt_templates"})
    r.has(k);
  r.done();
  OGX_CHECK(m.context_length >= 0 && m.vocab_size >= 0, "genai_config.json: model sizes must be >= 0");
}

void read_search(const json& j, SearchConfig& s) {
  ObjectReader r(j, "search");
  r.get("do_sample", s.do_sample);
  r.get("max_length", s.max_length);
  r.get("min_length", s.min_length);
  r.get("num_beams", s.num_beams);
  r.get("num_return_sequences", s.num_return_sequences);
  r.get("past_present_share_buffer", s.past_present_share_buffer);
  r.get("repetition_penalty", s.repetition_penalty);
  r.get("presence_penalty", s.presence_penalty);
  r.get("frequency_penalty", s.frequency_penalty);
  r.get("temperature", s.temperature);
  r.get("top_k", s.top_k);
  r.get("top_p", s.top_p);
  r.get("early_stopping", s.early_stopping);
  r.get("length_penalty", s.length_penalty);
  r.get("no_repeat_ngram_size", s.no_repeat_ngram_size);
  r.get("diversity_penalty", s.diversity_penalty);
  r.get("random_seed", s.random_seed);
  r.get("batch_size", s.batch_size);
  r.done();
  OGX_CHECK(s.max_length >= 0, "genai_config.json: search.max_length must be >= 0");
  OGX_CHECK(s.min_length >= 0, "genai_config.json: search.min_length must be >= 0");
  OGX_CHECK(s.num_beams >= 1, "genai_config.json: search.num_beams must be >= 1");
  OGX_CHECK(s.top_k >= 0, "genai_config.json: search.top_k must be >= 0");
  OGX_CHECK(s.top_p > 0 && s.top_p <= 1, "genai_config.json: search.top_p must be in (0, 1]");
  check_temperature(s.temperature, "genai_config.json: search.temperature");
  OGX_CHECK(s.repetition_penalty > 0 && std::isfinite(s.repetition_penalty),
            "genai_config.json: search.repetition_penalty must be a finite number > 0");
  check_token_penalties(s, "genai_config.json: search.");
  OGX_CHECK(s.batch_size >= 1, "genai_config.json: search.batch_size must be >= 1");
  OGX_CHECK(s.no_repeat_ngram_size >= 0, "genai_config.json: search.no_repeat_ngram_size must be >= 0");
}

// ONNX Runtime GenAI's ranges; the options ogx lacks are refused when a generator starts (speculative.cpp).
void read_speculative(const json& j, SpeculativeConfig& s) {
  ObjectReader r(j, "speculative");
  r.get("max_draft_tokens", s.max_draft_tokens);
  r.get("ngram_size", s.ngram_size);
  r.get("ngram_chained_lookup", s.ngram_chained_lookup);
  r.get("min_adaptive_k", s.min_adaptive_k);
  r.get("cooldown", s.cooldown);
  r.done();
  OGX_CHECK(s.max_draft_tokens >= 1 && s.max_draft_tokens <= 16, "genai_config.json: speculative.max_draft_tokens must "
            "be between 1 and 16, got ", s.max_draft_tokens);
  OGX_CHECK(s.ngram_size >= 0 && s.ngram_size <= 16 && s.ngram_size != 1, "genai_config.json: speculative.ngram_size "
            "must be 0 or between "
            "2 and 16, got ", s.ngram_size);
  OGX_CHECK(s.min_adaptive_k >= 0 && s.min_adaptive_k <= 16, "genai_config.json: speculative.min_adaptive_k must be 0 "
            "or between 1 and 16, got ", s.min_adaptive_k);
}

void apply_json(Config& c, const json& j) {
  ObjectReader r(j, "$");
  if (r.has("model")) read_model(r.at("model"), c.model);
  if (r.has("search")) read_search(r.at("search"), c.search);
  if (r.has("speculative")) read_speculative(r.at("speculative"), c.speculative);
  r.done();
}

json parse_json(const std::string& text, const std::string& what) {
  check_json_depth(text, what);
  try {
    return json::parse(text, nullptr, true, true);
  } catch (const json::exception& e) {
    throw_error(what, " is not valid JSON: ", json_error_text(e));
  }
}

}  // namespace

Config Config::parse(const std::string& text, const std::string& model_dir) {
  Config c;
  c.model_dir = model_dir;
  apply_json(c, parse_json(text, "genai_config.json"));
  return c;
}

Config Config::load(const std::string& model_dir) {
  std::string path = model_dir + "/genai_config.json";
  std::error_code ec;
  OGX_CHECK(!std::filesystem::is_directory(path, ec), "'", path, "' is a directory, not a genai_config.json file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_error("cannot read '", path, "': is '", model_dir, "' a model folder?");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str(), model_dir);
}

void Config::overlay(const std::string& text) { apply_json(*this, parse_json(text, "config overlay")); }

void Config::clear_providers() { model.decoder.session.providers.clear(); }

void Config::append_provider(const std::string& name) {
  for (auto& p : model.decoder.session.providers)
    if (p.name == name) return;
  model.decoder.session.providers.push_back(ProviderEntry{name, {}, {}});
}

void Config::set_provider_option(const std::string& provider, const std::string& key, const std::string& value) {
  append_provider(provider);
  for (auto& p : model.decoder.session.providers) {
    if (p.name != provider) continue;
    OptionList& list = is_device_filtering_key(key) ? p.device_filtering : p.options;
    for (auto& kv : list)
      if (kv.first == key) {
        kv.second = value;
        return;
      }
    list.emplace_back(key, value);
  }
}

void check_temperature(double t, const std::string& what) {
  OGX_CHECK(std::isfinite(t) && t >= kMinTemperature, what, " must be a finite number >= ", kMinTemperature, ", got ",
            t, " (for greedy search set do_sample to false)");
}

void check_token_penalties(const SearchConfig& s, const std::string& prefix) {
  for (auto [name, v] : {std::pair<const char*, double>{"presence_penalty", s.presence_penalty},
                         {"frequency_penalty", s.frequency_penalty}})
    OGX_CHECK(std::isfinite(v) && v >= -kMaxTokenPenalty && v <= kMaxTokenPenalty, prefix, name, " must be in [",
              -kMaxTokenPenalty, ", ", kMaxTokenPenalty, "], got ", v);
}

bool is_device_filtering_key(const std::string& key) {
  return key == "hardware_device_type" || key == "hardware_device_id" || key == "hardware_vendor_id";
}

std::string canonical_provider(const std::string& name) {
  if (name == "cpu" || name == "CPU") return "cpu";
  if (name == "vulkan" || name == "dml" || name == "DML") return "vulkan";
  throw_error("unknown execution provider '", name, "' (known: cpu, vulkan, dml)");
}

}  // namespace ogx::genai
