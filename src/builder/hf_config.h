// The Hugging Face config.json (+ generation_config.json) fields the builder uses, validated.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ogx::builder {

enum class Arch { llama, mistral, qwen2, qwen3, phi3, gemma2 };

// Rotary settings (transformers' rope_scaling / rope_parameters; formulas in rope.cpp).
struct RopeConfig {
  double theta = 10000.0;
  double partial_factor = 1.0;
  std::string type = "default";  // default | linear | llama3 | yarn | longrope ("su" is read as longrope)
  double factor = 1.0;                                   // linear, llama3, yarn (longrope: max / original)
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  // llama3, yarn, longrope: the pretrained context (rope_scaling's or the config's top-level key; yarn and
  // longrope default to max_position_embeddings).
  int64_t original_max_position = 8192;
  double beta_fast = 32.0, beta_slow = 1.0;  // yarn: the ramp's rotation bounds
  double mscale = 0.0, mscale_all_dim = 0.0;  // yarn (DeepSeek): attention factor from both when both are set
  bool truncate = true;                       // yarn: floor/ceil the ramp's bounds (gpt-oss sets false)
  std::optional<double> attention_factor;     // yarn, longrope: explicit cos/sin scale
  std::vector<double> short_factor, long_factor;  // longrope: [rotary_dim / 2] each
  std::optional<double> short_mscale, long_mscale;  // longrope (Phi-3.5-MoE): per-cache scales
};

struct HfConfig {
  Arch arch = Arch::llama;
  std::string architecture;  // e.g. LlamaForCausalLM
  std::string genai_type;    // genai_config model.type: llama, mistral, qwen2, qwen3, phi3, gemma2
  int64_t hidden = 0, intermediate = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, vocab = 0;
  int64_t max_position = 0;
  double rms_eps = 1e-6;
  RopeConfig rope;
  // Dimensions of a head that rotate: head_dim * partial_rotary_factor (Phi-4-mini 0.75, GPT-NeoX style: the
  // leading dims rotate, the rest pass through), even; head_dim when the factor is 1.
  int64_t rotary_dim() const { return (int64_t)((double)head_dim * rope.partial_factor); }
  bool tie_embeddings = false;
  std::string hidden_act = "silu";
  // GroupQueryAttention local_window_size: absent key -> -1 attribute; null -> no attribute; N -> N on sliding
  // layers (N keys including the current one, in HF and in ONNX Runtime >= 1.30), -1 on the others.
  bool has_window_key = false;
  std::optional<int64_t> sliding_window;
  std::vector<bool> sliding_layers;  // per layer: uses the sliding window (config layer_types or the arch's rule)
  double attn_softcap = 0.0, final_softcap = 0.0;  // gemma2
  double query_pre_attn_scalar = 0.0;              // gemma2 (0: head_dim)
  int64_t bos = -1;
  std::vector<int64_t> eos;
  std::optional<int64_t> pad;
  nlohmann::json generation;  // generation_config.json (may be null)
};

// Throws ogx::Error naming the missing/bad field or the unsupported architecture.
HfConfig parse_hf_config(const nlohmann::json& config, const nlohmann::json& generation);
nlohmann::json read_json_file(const std::string& path);  // throws naming the path

}  // namespace ogx::builder
