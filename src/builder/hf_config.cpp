#include "builder/hf_config.h"

#include <filesystem>
#include <fstream>

#include "builder/size_plan.h"
#include "common/error.h"
#include "common/json_limits.h"

using nlohmann::json;

namespace ogx::builder {

json read_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw_error("'", path, "' is a directory, not a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_error("cannot open ", path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  check_json_depth(text, path);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw_error(path, ": bad JSON: ", json_error_text(e));
  }
}

namespace {

int64_t req_int(const json& c, const char* key) {
  if (!c.contains(key) || !c[key].is_number_integer())
    throw_error("config.json: missing or non-integer field ", key);
  int64_t v = c[key].get<int64_t>();
  if (v <= 0) throw_error("config.json: field ", key, " must be positive, got ", v);
  return v;
}

int64_t opt_int(const json& c, const char* key, int64_t def) {
  if (!c.contains(key) || c[key].is_null()) return def;
  if (!c[key].is_number_integer()) throw_error("config.json: field ", key, " must be an integer");
  return c[key].get<int64_t>();
}

double opt_num(const json& c, const char* key, double def) {
  if (!c.contains(key) || c[key].is_null()) return def;
  if (!c[key].is_number()) throw_error("config.json: field ", key, " must be a number");
  return c[key].get<double>();
}

struct ArchInfo {
  const char* hf;
  Arch arch;
  const char* type;
};

constexpr ArchInfo kArchs[] = {
    {"LlamaForCausalLM", Arch::llama, "llama"},   {"MistralForCausalLM", Arch::mistral, "mistral"},
    {"Qwen2ForCausalLM", Arch::qwen2, "qwen2"},   {"Qwen3ForCausalLM", Arch::qwen3, "qwen3"},
    {"Phi3ForCausalLM", Arch::phi3, "phi3"},      {"Gemma2ForCausalLM", Arch::gemma2, "gemma2"},
};

void parse_arch(const json& c, HfConfig& h) {
  if (!c.contains("architectures") || !c["architectures"].is_array() || c["architectures"].empty())
    throw_error("config.json: missing field architectures");
  if (!c["architectures"][0].is_string()) throw_error("config.json: architectures[0] must be a string");
  h.architecture = c["architectures"][0].get<std::string>();
  for (const auto& a : kArchs)
    if (h.architecture == a.hf) {
      h.arch = a.arch;
      h.genai_type = a.type;
      return;
    }
  throw_error("config.json: unsupported architecture ", h.architecture,
              " (supported: Llama, Mistral, Qwen2, Qwen3, Phi3, Gemma2 *ForCausalLM)");
}

std::vector<double> num_list(const json& rs, const char* key) {
  if (!rs.contains(key) || !rs[key].is_array()) throw_error("config.json: rope_scaling needs the number list ", key);
  std::vector<double> v;
  for (const auto& x : rs[key]) {
    if (!x.is_number()) throw_error("config.json: rope_scaling.", key, " must hold numbers");
    v.push_back(x.get<double>());
  }
  return v;
}

std::optional<double> opt_positive(const json& rs, const char* key) {
  if (!rs.contains(key) || rs[key].is_null()) return std::nullopt;
  double v = opt_num(rs, key, 0.0);
  if (!(v > 0)) return std::nullopt;  // 0 means "derive it", as the reference builder reads it
  return v;
}

// transformers >= 5 puts rope settings in rope_parameters; older configs use rope_theta + rope_scaling.
void parse_rope(const json& c, HfConfig& h) {
  json rp = c.contains("rope_parameters") && c["rope_parameters"].is_object() ? c["rope_parameters"] : json::object();
  json rs = c.contains("rope_scaling") && c["rope_scaling"].is_object() ? c["rope_scaling"] : rp;
  h.rope.theta = opt_num(rp, "rope_theta", opt_num(c, "rope_theta", 10000.0));
  h.rope.partial_factor = opt_num(rp, "partial_rotary_factor", opt_num(c, "partial_rotary_factor", 1.0));
  std::string type = "default";
  if (rs.contains("rope_type") && rs["rope_type"].is_string()) type = rs["rope_type"];
  else if (rs.contains("type") && rs["type"].is_string()) type = rs["type"];
  if (type == "su") type = "longrope";  // Phi-3's first name for it
  if (type != "default" && type != "linear" && type != "llama3" && type != "yarn" && type != "longrope")
    throw_error("config.json: unsupported rope_scaling type ", type,
                " (supported: default, linear, llama3, yarn, longrope/su)");
  h.rope.type = type;
  RopeConfig& r = h.rope;
  // The pretrained context: rope_scaling's key, else the config's top level (Phi-3), else max_position_embeddings.
  const int64_t top_orig = opt_int(c, "original_max_position_embeddings", h.max_position);
  if (type == "linear") {
    r.factor = opt_num(rs, "factor", 1.0);
  } else if (type == "llama3") {
    r.factor = opt_num(rs, "factor", 8.0);
    r.low_freq_factor = opt_num(rs, "low_freq_factor", 1.0);
    r.high_freq_factor = opt_num(rs, "high_freq_factor", 4.0);
    r.original_max_position = opt_int(rs, "original_max_position_embeddings", 8192);
    if (!(r.high_freq_factor > r.low_freq_factor))
      throw_error("config.json: rope_scaling high_freq_factor must exceed low_freq_factor");
  } else if (type == "yarn") {
    r.original_max_position = opt_int(rs, "original_max_position_embeddings", top_orig);
    // factor: given, else (DeepSeek style) the ratio of the context to the pretrained one.
    r.factor = rs.contains("factor") && !rs["factor"].is_null()
                   ? opt_num(rs, "factor", 1.0)
                   : (double)h.max_position / (double)r.original_max_position;
    r.beta_fast = opt_positive(rs, "beta_fast").value_or(32.0);
    r.beta_slow = opt_positive(rs, "beta_slow").value_or(1.0);
    r.mscale = opt_num(rs, "mscale", 0.0);
    r.mscale_all_dim = opt_num(rs, "mscale_all_dim", 0.0);
    r.attention_factor = opt_positive(rs, "attention_factor");
    if (rs.contains("truncate") && rs["truncate"].is_boolean()) r.truncate = rs["truncate"].get<bool>();
  } else if (type == "longrope") {
    r.original_max_position = opt_int(rs, "original_max_position_embeddings", top_orig);
    r.short_factor = num_list(rs, "short_factor");
    r.long_factor = num_list(rs, "long_factor");
    // transformers: with a separate pretrained context, factor is the ratio of the two; else rope_scaling.factor.
    r.factor = r.original_max_position != h.max_position
                   ? (double)h.max_position / (double)r.original_max_position
                   : opt_num(rs, "factor", 1.0);
    r.attention_factor = opt_positive(rs, "attention_factor");
    r.short_mscale = opt_positive(rs, "short_mscale");
    r.long_mscale = opt_positive(rs, "long_mscale");
  }
  if (type != "default" && !(r.factor > 0)) throw_error("config.json: rope_scaling factor must be positive");
  if ((type == "yarn" || type == "longrope" || type == "llama3") && r.original_max_position <= 0)
    throw_error("config.json: original_max_position_embeddings must be positive");
  if (type == "longrope" && r.original_max_position > h.max_position)
    throw_error("config.json: original_max_position_embeddings ", r.original_max_position,
                " exceeds max_position_embeddings ", h.max_position);
  if (!(h.rope.partial_factor > 0.0 && h.rope.partial_factor <= 1.0))
    throw_error("config.json: partial_rotary_factor must be in (0, 1], got ", h.rope.partial_factor);
  if (h.rope.partial_factor != 1.0 && h.arch != Arch::phi3)  // (transformers rotates the whole head of the others)
    throw_error("config.json: partial_rotary_factor ", h.rope.partial_factor, " is supported for phi3 (Phi-4-mini) "
                "only among the architectures ogx builds, not ", h.architecture);
  if (h.rotary_dim() < 2 || h.rotary_dim() % 2 != 0)
    throw_error("config.json: partial_rotary_factor ", h.rope.partial_factor, " x head_dim ", h.head_dim,
                " gives ", h.rotary_dim(), " rotary dimensions (must be even and >= 2)");
  if (type == "longrope") {
    const size_t half = (size_t)(h.rotary_dim() / 2);
    if (r.short_factor.size() != half || r.long_factor.size() != half)
      throw_error("config.json: rope_scaling short_factor and long_factor need ", half,
                  " entries (rotary dimensions / 2), got ", r.short_factor.size(), " and ", r.long_factor.size());
    for (double f : r.short_factor) if (!(f > 0)) throw_error("config.json: rope_scaling short_factor must be positive");
    for (double f : r.long_factor) if (!(f > 0)) throw_error("config.json: rope_scaling long_factor must be positive");
  }
}

void parse_tokens(const json& c, const json& g, HfConfig& h) {
  const json& src = g.is_object() && g.contains("eos_token_id") ? g : c;
  h.bos = opt_int(g.is_object() && g.contains("bos_token_id") ? g : c, "bos_token_id", -1);
  if (src.contains("eos_token_id")) {
    const auto& e = src["eos_token_id"];
    if (e.is_array())
      for (const auto& v : e) {
        if (!v.is_number_integer()) throw_error("config.json: eos_token_id must hold integers");
        h.eos.push_back(v.get<int64_t>());
      }
    else if (e.is_number_integer())
      h.eos.push_back(e.get<int64_t>());
  }
  if (c.contains("pad_token_id") && c["pad_token_id"].is_number_integer()) h.pad = c["pad_token_id"].get<int64_t>();
}

// Which layers slide (transformers' layer_types): the config's own list when present; else gemma2 alternates
// starting with a sliding layer, qwen2/qwen3 slide from max_window_layers on, the others slide everywhere.
void parse_sliding_layers(const json& c, HfConfig& h) {
  h.sliding_layers.assign(h.layers, false);
  if (!h.sliding_window) return;
  if (*h.sliding_window < 2) throw_error("config.json: sliding_window must be at least 2, got ", *h.sliding_window);
  if (c.contains("layer_types") && c["layer_types"].is_array()) {
    const json& lt = c["layer_types"];
    if ((int64_t)lt.size() != h.layers)
      throw_error("config.json: layer_types has ", lt.size(), " entries for ", h.layers, " layers");
    for (int64_t i = 0; i < h.layers; i++) {
      std::string t = lt[i].is_string() ? lt[i].get<std::string>() : "";
      if (t != "sliding_attention" && t != "full_attention")
        throw_error("config.json: unsupported layer_types entry '", t, "' (sliding_attention, full_attention)");
      h.sliding_layers[i] = t == "sliding_attention";
    }
    return;
  }
  const int64_t first = h.arch == Arch::qwen2 || h.arch == Arch::qwen3 ? opt_int(c, "max_window_layers", 28) : 0;
  for (int64_t i = 0; i < h.layers; i++)
    h.sliding_layers[i] = h.arch == Arch::gemma2 ? i % 2 == 0 : i >= first;
}

void parse_arch_specific(const json& c, HfConfig& h) {
  h.has_window_key = c.contains("sliding_window");
  if (h.has_window_key && c["sliding_window"].is_number_integer()) h.sliding_window = c["sliding_window"].get<int64_t>();
  if (h.arch == Arch::llama) h.sliding_window.reset();  // transformers' Llama has no sliding window
  // Qwen2/Qwen3 slide only with use_sliding_window: true (transformers drops sliding_window otherwise).
  if ((h.arch == Arch::qwen2 || h.arch == Arch::qwen3) &&
      !(c.contains("use_sliding_window") && c["use_sliding_window"].is_boolean() && c["use_sliding_window"].get<bool>()))
    h.sliding_window.reset();
  parse_sliding_layers(c, h);
  if (h.arch == Arch::gemma2) {
    h.attn_softcap = opt_num(c, "attn_logit_softcapping", 0.0);
    h.final_softcap = opt_num(c, "final_logit_softcapping", 0.0);
    h.query_pre_attn_scalar = opt_num(c, "query_pre_attn_scalar", 0.0);
    if (c.contains("hidden_activation") && c["hidden_activation"].is_string()) h.hidden_act = c["hidden_activation"];
  }
}

}  // namespace

HfConfig parse_hf_config(const json& c, const json& g) {
  HfConfig h;
  parse_arch(c, h);
  h.hidden = req_int(c, "hidden_size");
  h.intermediate = req_int(c, "intermediate_size");
  h.layers = req_int(c, "num_hidden_layers");
  h.heads = req_int(c, "num_attention_heads");
  h.kv_heads = opt_int(c, "num_key_value_heads", h.heads);
  h.head_dim = opt_int(c, "head_dim", h.hidden / h.heads);
  h.vocab = req_int(c, "vocab_size");
  h.max_position = req_int(c, "max_position_embeddings");
  if (h.kv_heads <= 0 || h.head_dim <= 0)
    throw_error("config.json: num_key_value_heads and head_dim must be positive, got ", h.kv_heads, ", ", h.head_dim);
  if (h.layers > kMaxLayers)  // before parse_sliding_layers sizes a per-layer list
    throw_error("config.json: num_hidden_layers ", h.layers, " is more than ", kMaxLayers,
                " (an ONNX graph of that many layers cannot exist)");
  h.rms_eps = opt_num(c, "rms_norm_eps", 1e-6);
  h.tie_embeddings = c.contains("tie_word_embeddings") && c["tie_word_embeddings"].is_boolean()
                         ? c["tie_word_embeddings"].get<bool>()
                         : h.arch == Arch::gemma2;
  if (c.contains("hidden_act") && c["hidden_act"].is_string()) h.hidden_act = c["hidden_act"];
  if (h.heads % h.kv_heads != 0)
    throw_error("config.json: num_attention_heads ", h.heads, " is not a multiple of num_key_value_heads ", h.kv_heads);
  parse_rope(c, h);
  parse_tokens(c, g, h);
  parse_arch_specific(c, h);
  if (h.hidden_act != "silu" && h.hidden_act != "gelu_pytorch_tanh")
    throw_error("config.json: unsupported hidden_act ", h.hidden_act, " (supported: silu, gelu_pytorch_tanh)");
  h.generation = g;
  return h;
}

}  // namespace ogx::builder
