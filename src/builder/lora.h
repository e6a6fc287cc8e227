// PEFT LoRA adapters in the builder: reading a PEFT folder (adapter_config.json + adapter_model.safetensors),
// the LoRA of one Hugging Face linear layer (A [r, in], B [out, r], scale), the merged-weights provider
// (W' = W + scale * B A) and a seeded random adapter written in PEFT's layout (tests).
//
// In a model built with an adapter, each adapted projection y = x W gets the reference builder's LoRA branch
// y += (x A') B' with A' = A^T [in, r] and B' = (scale B)^T [r, out] as graph inputs
// "model.layers.<i>.<attn|mlp>.<proj>.lora_A.weight" / "...lora_B.weight" (the names ONNX Runtime's adapter files
// use, the shapes [in, "lora_r"] / ["lora_r", out], the inputs' defaults zero-rank tensors: Olive's ExtractAdapters
// layout), and the adapter's values go to OUT/<name>.onnx_adapter.
#pragma once
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "builder/safetensors.h"
#include "builder/weight_source.h"

namespace ogx::builder {

struct LoraWeights {
  Source A;          // [r, in] (PEFT's lora_A.weight)
  Source B;          // [out rows, r] (PEFT's lora_B.weight, possibly a row slice of a fused projection)
  float scale = 1;   // lora_alpha / r, or lora_alpha / sqrt(r) with use_rslora
  int64_t rank = 0;
};

class PeftAdapter {
 public:
  // Reads and validates dir/adapter_config.json and dir/adapter_model.safetensors (throws naming the file/field).
  static std::shared_ptr<PeftAdapter> open(const std::string& dir);
  // The LoRA of HF linear `module` ("model.layers.0.self_attn.q_proj") whose weight is [out, in]; rows
  // [row0, row0 + nrows) of its output (a slice of a fused projection; nrows < 0: all). nullopt: not adapted.
  std::optional<LoraWeights> find(const std::string& module, int64_t out, int64_t in, int64_t row0 = 0,
                                  int64_t nrows = -1);
  // Adapter tensors no find() asked for (a module the graph does not have: an error for the caller).
  std::vector<std::string> unused() const;
  const std::string& name() const { return name_; }  // the folder's name: OUT/<name>.onnx_adapter

 private:
  std::string key(const std::string& module, const char* which) const;  // safetensors name or ""
  float alpha_for(const std::string& module) const;
  std::string dir_, name_;
  nlohmann::json config_;
  SafeTensors st_;
  std::set<std::string> used_;
};

// Base weights with the adapter merged into every adapted projection (W + scale * B A, computed in fp32).
std::unique_ptr<WeightProvider> make_merged_provider(WeightProvider& base, std::shared_ptr<PeftAdapter> lora);

struct RandomLoraOptions {
  int64_t rank = 4;
  double alpha = 8;
  bool rslora = false;
  std::vector<std::string> targets;  // HF linear names ("q_proj", "qkv_proj", ...); empty: every projection
  uint64_t seed = 4321;
  float stddev = 0.02f;  // of A and B (PEFT starts B at zero; a test adapter needs B != 0)
};
// A PEFT folder (adapter_config.json, adapter_model.safetensors, fp32) with a seeded random LoRA for every layer's
// targeted projections of `config_path`'s shape.
void write_random_lora(const std::string& config_path, const std::string& out_dir, const RandomLoraOptions& o);

}  // namespace ogx::builder
