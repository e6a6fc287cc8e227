// build_model: config -> graph + weights in memory; write_model_folder: model.onnx, model.onnx.data,
// genai_config.json and the tokenizer files.
#include "builder/builder.h"

#include <filesystem>
#include <fstream>

#include "builder/decoder_graph.h"
#include "builder/genai_config_writer.h"
#include "builder/graph_writer.h"
#include "builder/hf_config.h"
#include "builder/lora.h"
#include "builder/safetensors.h"
#include "builder/size_plan.h"
#include "builder/weight_source.h"
#include "common/error.h"
#include "common/half.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ogx::builder {

const char* precision_name(Precision p) {
  return p == Precision::fp32 ? "fp32" : p == Precision::fp16 ? "fp16" : "int4";
}

const char* provider_name(Provider p) { return p == Provider::cpu ? "cpu" : p == Provider::dml ? "dml" : "vulkan"; }

namespace {

const char* kCopiedFiles[] = {"tokenizer.json", "tokenizer_config.json", "tokenizer.model", "special_tokens_map.json",
                              "generation_config.json"};

void check_options(const BuildOptions& o) {
  if (o.input_dir.empty() && o.config_path.empty()) throw_error("build: need an input folder (-i) or --config");
  if (o.precision == Precision::int4 &&
      (o.block_size < 16 || o.block_size > 256 || (o.block_size & (o.block_size - 1)) != 0))
    throw_error("build: --block-size must be a power of two in [16, 256], got ", o.block_size);
}

// A checkpoint tensor the graph never read means a feature the builder does not implement (an o_proj or MLP
// bias, an extra norm...): converting without it would silently change the model, so it is an error. Ignored:
// rotary inv_freq buffers (recomputed from the config) and lm_head.weight of tied models (HF ignores it too).
void check_all_weights_used(const HfConfig& cfg, const WeightProvider& w) {
  for (const auto& name : w.unused_nonzero()) {
    const std::string suffix = "rotary_emb.inv_freq";
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) continue;
    if (cfg.tie_embeddings && name == "lm_head.weight") continue;
    throw_error("tensor ", name, " in the checkpoint is not used by the ", cfg.architecture,
                " graph: unsupported feature (converting without it would change the model)");
  }
}

// The adapter file of a model built with LoRA inputs: A' = A^T [in, r], B' = (scale B)^T [r, out] (the reference
// builder folds the scale into B), in the model's activation dtype.
AdapterFile make_adapter_file(const std::vector<GraphSettings::LoraInput>& inputs, int onnx_dtype) {
  AdapterFile f;
  f.adapter_version = 1;
  f.model_version = 1;
  const DType dt = onnx_dtype == onnx::TensorProto::FLOAT16 ? DType::f16 : DType::f32;
  auto transposed = [dt](const std::vector<float>& m, int64_t rows, int64_t cols, float scale) {
    Tensor t(dt, {cols, rows});
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) {
        const float v = scale * m[(size_t)(i * cols + j)];
        if (dt == DType::f16) t.data<uint16_t>()[j * rows + i] = f32_to_f16(v);
        else t.data<float>()[j * rows + i] = v;
      }
    return t;
  };
  for (const auto& in : inputs) {
    const LoraWeights& w = in.weights;
    f.parameters.push_back({in.a_name, transposed(read_all(w.A), w.A.rows, w.A.cols, 1.0f)});
    f.parameters.push_back({in.b_name, transposed(read_all(w.B), w.B.rows, w.B.cols, w.scale)});
  }
  return f;
}

}  // namespace

BuiltModel build_model(const BuildOptions& o) {
  check_options(o);
  const bool random = o.random_weights || !o.config_path.empty();
  std::string cfg_path = o.config_path.empty() ? (fs::path(o.input_dir) / "config.json").string() : o.config_path;
  json gen;
  if (!o.input_dir.empty() && fs::exists(fs::path(o.input_dir) / "generation_config.json"))
    gen = read_json_file((fs::path(o.input_dir) / "generation_config.json").string());
  HfConfig cfg = parse_hf_config(read_json_file(cfg_path), gen);
  // The builder holds every weight in memory before writing: a shape that cannot fit fails here, before any.
  const SizePlan plan = plan_sizes(cfg, o.precision);
  check_fits(plan.weight_bytes, plan.params, host_memory_bytes(), std::string("the ") + precision_name(o.precision) +
             " model of " + cfg_path, "memory and swap on this machine");

  std::unique_ptr<WeightProvider> weights;
  if (random) weights = make_random_provider(o.seed, cfg.arch == Arch::qwen2, 0.02f, o.repeating_weights);
  else weights = make_safetensors_provider(std::make_shared<SafeTensors>(SafeTensors::open_dir(o.input_dir)));
  std::shared_ptr<PeftAdapter> lora;
  std::unique_ptr<WeightProvider> merged;
  if (!o.adapter_dir.empty()) lora = PeftAdapter::open(o.adapter_dir);
  if (lora && o.merge_adapter) merged = make_merged_provider(*weights, lora);
  WeightProvider& source = merged ? *merged : *weights;

  GraphSettings s{o.precision, o.provider, o.block_size, o.symmetric};
  s.include_hidden_states = o.include_hidden_states;
  std::vector<GraphSettings::LoraInput> lora_inputs;
  if (lora && !o.merge_adapter) {
    s.lora = lora.get();
    s.lora_inputs = &lora_inputs;
  }
  GraphWriter g;
  build_decoder_graph(cfg, s, source, g);
  check_all_weights_used(cfg, source);
  if (lora) {
    std::vector<std::string> unused = lora->unused();
    if (!unused.empty())
      throw_error("adapter tensor ", unused[0], " (of ", unused.size(), " unused) adapts no projection of the ",
                  cfg.architecture, " graph (only attention and MLP projections take LoRA)");
  }

  BuiltModel m;
  ThreadPool pool(o.num_threads);
  g.finish(m.model, m.weights, pool);
  if (!lora_inputs.empty()) {
    m.adapter_name = lora->name();
    m.adapter = make_adapter_file(lora_inputs, s.io_dtype());
  }
  m.genai_config = make_genai_config(cfg, o.provider, o.max_length);
  if (!o.input_dir.empty())
    for (const char* f : kCopiedFiles)
      if (fs::exists(fs::path(o.input_dir) / f)) m.files_to_copy.push_back((fs::path(o.input_dir) / f).string());
  return m;
}

void write_model_folder(const BuiltModel& m, const std::string& dir) {
  fs::create_directories(dir);
  {
    std::ofstream out(fs::path(dir) / "model.onnx", std::ios::binary);
    if (!out || !m.model.SerializeToOstream(&out)) throw_error("cannot write ", (fs::path(dir) / "model.onnx").string());
  }
  m.weights.write_file((fs::path(dir) / "model.onnx.data").string());
  {
    std::ofstream out(fs::path(dir) / "genai_config.json");
    out << m.genai_config.dump(4) << "\n";
    if (!out) throw_error("cannot write ", (fs::path(dir) / "genai_config.json").string());
  }
  for (const auto& f : m.files_to_copy)
    fs::copy_file(f, fs::path(dir) / fs::path(f).filename(), fs::copy_options::overwrite_existing);
  if (!m.adapter_name.empty())
    write_adapter_file(m.adapter, (fs::path(dir) / (m.adapter_name + ".onnx_adapter")).string());
}

}  // namespace ogx::builder
