#include "builder/cli.h"

#include <chrono>
#include <cstdio>
#include <memory>

#include "builder/builder.h"
#include "builder/lora.h"
#include "common/error.h"
#include "common/progress_bar.h"

namespace ogx::builder {

namespace {

const char* kDescription =
    "Converts a Hugging Face checkpoint to an ONNX Runtime GenAI folder:\n"
    "  ogx build -i HF_DIR -o OUT_DIR -p fp32|fp16|int4 -e cpu|dml|vulkan [options]\n"
    "  ogx build --config SHAPE.json -o OUT_DIR -p P -e E          (seeded random weights of that shape)\n"
    "  ogx build --config SHAPE.json --save-hf HF_DIR [--init-std S] (a random-weight Hugging Face checkpoint)\n"
    "  ogx build ... --adapter PEFT_DIR [--merge-adapter]   (a PEFT LoRA as graph inputs plus\n"
    "      OUT_DIR/<PEFT_DIR name>.onnx_adapter; --merge-adapter: folded into the weights, W + scale B A)\n"
    "  ogx build --config SHAPE.json --save-lora PEFT_DIR [--lora-r R] [--lora-alpha A] [--rslora]\n"
    "      [--lora-targets q_proj,v_proj,...]   (a seeded random PEFT LoRA for that shape)";

struct BuildRequest {
  BuildOptions o;
  std::string out_dir;       // -o
  std::string precision;     // -p fp32|fp16|int4
  std::string provider;      // -e cpu|dml|vulkan
  std::string save_hf;       // --save-hf HF_DIR
  float init_std = 0.02f;    // --init-std of --save-hf's matrices
  bool symmetric = false, asymmetric = false;
  bool quiet = false;        // --quiet: no progress bar
  std::string save_lora;     // --save-lora PEFT_DIR
  std::string lora_targets;  // --lora-targets, comma-separated
  float lora_alpha = 8;      // --lora-alpha
  RandomLoraOptions lora;
};

std::vector<std::string> split_list(const std::string& v) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= v.size()) {
    size_t p = v.find(',', start);
    if (p == std::string::npos) p = v.size();
    if (p > start) out.push_back(v.substr(start, p - start));
    start = p + 1;
  }
  return out;
}

// Cross-flag checks and the enum values; throws cli::UsageError.
void finish(BuildRequest& r) {
  BuildOptions& o = r.o;
  if (r.symmetric && r.asymmetric) throw cli::UsageError("give at most one of --symmetric and --asymmetric");
  if (r.symmetric) o.symmetric = true;
  if (r.asymmetric) o.symmetric = false;
  if (r.precision == "fp32") o.precision = Precision::fp32;
  else if (r.precision == "fp16") o.precision = Precision::fp16;
  else if (r.precision == "int4") o.precision = Precision::int4;
  if (r.provider == "cpu") o.provider = Provider::cpu;
  else if (r.provider == "dml") o.provider = Provider::dml;
  else if (r.provider == "vulkan") o.provider = Provider::vulkan;
  if (!(r.init_std > 0)) throw cli::UsageError("--init-std must be positive");
  if (o.merge_adapter && o.adapter_dir.empty()) throw cli::UsageError("--merge-adapter needs --adapter PEFT_DIR");
  if (!r.save_lora.empty() && o.config_path.empty()) throw cli::UsageError("--save-lora needs --config SHAPE.json");
  if (o.repeating_weights && !r.save_hf.empty()) throw cli::UsageError("--repeating-weights does not apply to --save-hf");
  if (!r.save_hf.empty() || (!r.save_lora.empty() && r.out_dir.empty())) {
    if (o.config_path.empty()) throw cli::UsageError("--save-hf needs --config SHAPE.json");
    return;
  }
  if (r.out_dir.empty()) throw cli::UsageError("missing -o OUT_DIR");
  if (o.input_dir.empty() && o.config_path.empty()) throw cli::UsageError("missing -i HF_DIR (or --config SHAPE.json)");
  if (!o.config_path.empty()) o.random_weights = true;
  if (o.repeating_weights && !o.random_weights) throw cli::UsageError("--repeating-weights needs --random-weights");
}

int run_build(BuildRequest& r) {
  finish(r);
  BuildOptions& o = r.o;
  if (!r.save_lora.empty()) {
    r.lora.seed = o.seed + 1;
    r.lora.stddev = r.init_std;
    r.lora.alpha = r.lora_alpha;
    r.lora.targets = split_list(r.lora_targets);
    write_random_lora(o.config_path, r.save_lora, r.lora);
    std::printf("wrote a random LoRA adapter of %s to %s\n", o.config_path.c_str(), r.save_lora.c_str());
    if (o.adapter_dir.empty()) o.adapter_dir = r.save_lora;
    if (r.save_hf.empty() && r.out_dir.empty()) return 0;
  }
  if (!r.save_hf.empty()) {
    write_random_checkpoint(o.config_path, r.save_hf, o.seed, r.init_std);
    std::printf("wrote a random-weight checkpoint of %s to %s\n", o.config_path.c_str(), r.save_hf.c_str());
    if (r.out_dir.empty()) return 0;
    o.config_path.clear();  // then build from the checkpoint just written
    o.random_weights = false;
    o.input_dir = r.save_hf;
  }
  auto t0 = std::chrono::steady_clock::now();
  BuiltModel m = [&] {
    cli::ProgressBar bar(r.quiet);
    BuiltModel built = build_model(o);
    write_model_folder(built, r.out_dir);
    return built;
  }();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("built %s %s model in %.2f s: %s (%.1f MB of weights)\n", precision_name(o.precision),
              provider_name(o.provider), s, r.out_dir.c_str(), m.weights.size() / 1e6);
  return 0;
}

}  // namespace

cli::Runner define_build(cli::Flags& flags) {
  auto r = std::make_shared<BuildRequest>();
  BuildOptions& o = r->o;
  flags.description(kDescription);
  flags.option("-i,--input", o.input_dir, "Hugging Face checkpoint folder (config.json, *.safetensors)");
  flags.option("-o,--output", r->out_dir, "output model folder");
  flags.choice("-p,--precision", r->precision, "weight precision", {"fp32", "fp16", "int4"});
  flags.choice("-e,--execution-provider", r->provider, "target provider", {"cpu", "dml", "vulkan"});
  flags.option("--block-size", o.block_size, "int4 quantization block");
  flags.flag("--symmetric", r->symmetric, "int4 without zero points");
  flags.flag("--asymmetric", r->asymmetric, "int4 with zero points");
  flags.option("--max-length", o.max_length, "context length written to genai_config.json");
  flags.flag("--random-weights", o.random_weights, "seeded random weights of the checkpoint's shape");
  flags.flag("--repeating-weights", o.repeating_weights,
             "random weights whose layers add nothing and whose lm_head is the embedding: greedy decoding repeats "
             "the last token (a known continuation, for speculative-decoding benchmarks)");
  flags.option("--config", o.config_path, "a config.json shape to build with random weights");
  flags.option("--seed", o.seed, "seed of the random weights");
  flags.option("--threads", o.num_threads, "threads (0: all cores)");
  flags.option("--save-hf", r->save_hf, "write a random-weight Hugging Face checkpoint of --config here");
  flags.option("--init-std", r->init_std, "std of --save-hf's matrices");
  flags.option("--adapter", o.adapter_dir, "a PEFT LoRA folder: adapter inputs + OUT_DIR/<name>.onnx_adapter");
  flags.flag("--merge-adapter", o.merge_adapter, "fold --adapter into the weights (W + scale B A) instead");
  flags.flag("--include-hidden-states", o.include_hidden_states,
             "also output the final norm's output as \"hidden_states\" (the reference builder's include_hidden_states)");
  flags.option("--save-lora", r->save_lora, "write a seeded random PEFT LoRA of --config's shape here");
  flags.option("--lora-r", r->lora.rank, "rank of --save-lora");
  flags.option("--lora-alpha", r->lora_alpha, "lora_alpha of --save-lora");
  flags.flag("--rslora", r->lora.rslora, "--save-lora with rank-stabilized scaling (alpha / sqrt(r))");
  flags.option("--lora-targets", r->lora_targets, "--save-lora's projections, comma-separated (default: all)");
  flags.flag("-q,--quiet", r->quiet, "no progress bar (it is drawn only when stderr is a terminal)");
  return [r] { return run_build(*r); };
}

int cmd_build(const std::vector<std::string>& args) { return cli::run_command(kBuildCommand, args); }

}  // namespace ogx::builder
