// Public API of the model builder: Hugging Face checkpoint (or a config shape with random weights) -> an
// ONNX Runtime GenAI model held in memory (BuiltModel), which can be written as a model folder.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "builder/weight_store.h"
#include "onnx/adapter_format.h"

namespace ogx::builder {

enum class Precision { fp32, fp16, int4 };
enum class Provider { cpu, dml, vulkan };

struct BuildOptions {
  std::string input_dir;        // Hugging Face folder: config.json, safetensors, tokenizer files
  std::string config_path;      // --config: a HF config.json (shape only); implies random weights
  Precision precision = Precision::fp32;
  Provider provider = Provider::cpu;
  int block_size = 32;          // int4 quantization block (16, 32, 64, 128, 256)
  bool symmetric = true;        // int4: symmetric (no zero points), the reference builder's default
  int64_t max_length = 0;       // genai_config search.max_length; 0: min(context_length, 4096)
  bool random_weights = false;  // seeded random weights of the config's shape, no safetensors read
  bool repeating_weights = false;  // with random weights: a model that repeats its last token (weight_source.h)
  uint64_t seed = 1234;
  int num_threads = 0;          // quantization / conversion threads; <= 0: hardware concurrency
  std::string adapter_dir;      // --adapter: a PEFT LoRA folder (lora.h)
  bool merge_adapter = false;   // --merge-adapter: fold it into the weights (W + scale B A) instead of inputs
  bool include_hidden_states = false;  // --include-hidden-states: the final norm's output as output "hidden_states"
};

struct BuiltModel {
  onnx::ModelProto model;          // initializers reference external data (location, offset, length)
  WeightStore weights;             // the bytes of model.onnx.data
  nlohmann::json genai_config;
  std::vector<std::string> files_to_copy;  // tokenizer/generation files found in the input folder
  std::string adapter_name;                // with an adapter as inputs: OUT/<adapter_name>.onnx_adapter
  AdapterFile adapter;                     // its parameters (A' [in, r], B' [r, out] in the activation dtype)
};

BuiltModel build_model(const BuildOptions& opts);
void write_model_folder(const BuiltModel& model, const std::string& dir);

// A Hugging Face checkpoint folder (config.json, fp32 model.safetensors) with the seeded random weights of
// `config_path`'s shape: matrices uniform with standard deviation `stddev` (0.02 gives --random-weights' values).
void write_random_checkpoint(const std::string& config_path, const std::string& out_dir, uint64_t seed = 1234,
                             float stddev = 0.02f);

const char* precision_name(Precision p);
const char* provider_name(Provider p);

}  // namespace ogx::builder
