#include "builder/cli.h"

#include <chrono>
#include <cstdio>

#include "builder/builder.h"
#include "builder/lora.h"
#include "common/error.h"

namespace ogx::builder {

namespace {

const char* kUsage =
    "usage: ogx build -i HF_DIR -o OUT_DIR -p fp32|fp16|int4 -e cpu|dml|vulkan [--block-size 32|64|128]\n"
    "                 [--symmetric | --asymmetric] [--max-length N] [--random-weights] [--config SHAPE.json]\n"
    "                 [--seed N] [--threads N]\n"
    "                 [--adapter PEFT_DIR [--merge-adapter]]\n"
    "                 (--adapter: a PEFT LoRA as graph inputs plus OUT_DIR/<PEFT_DIR name>.onnx_adapter;\n"
    "                  --merge-adapter: folded into the weights, W + scale B A, no inputs)\n"
    "       ogx build --config SHAPE.json --save-hf HF_DIR [--seed N] [--init-std S]\n"
    "                 (writes a Hugging Face checkpoint of seeded random weights, matrices with std S, default 0.02)\n"
    "       ogx build --config SHAPE.json --save-lora PEFT_DIR [--lora-r R] [--lora-alpha A] [--rslora]\n"
    "                 [--lora-targets q_proj,v_proj,...] [--seed N] [--init-std S]\n"
    "                 (writes a seeded random PEFT LoRA for that shape; default: every projection, r 4, alpha 8)\n";

int64_t to_int(const std::string& flag, const std::string& v) {
  try {
    size_t pos = 0;
    long long x = std::stoll(v, &pos);
    if (pos != v.size()) throw 0;
    return x;
  } catch (...) {
    throw_error(flag, ": expected an integer, got '", v, "'");
  }
}

struct CheckpointRequest {
  std::string dir;
  float init_std = 0.02f;
  std::string lora_dir;  // --save-lora
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

BuildOptions parse(const std::vector<std::string>& args, std::string& out_dir, CheckpointRequest& ckpt) {
  BuildOptions o;
  auto value = [&](size_t& i) -> const std::string& {
    if (i + 1 >= args.size()) throw_error(args[i], " needs a value");
    return args[++i];
  };
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    if (a == "-i" || a == "--input") o.input_dir = value(i);
    else if (a == "-o" || a == "--output") out_dir = value(i);
    else if (a == "-p" || a == "--precision") {
      const std::string& v = value(i);
      if (v == "fp32") o.precision = Precision::fp32;
      else if (v == "fp16") o.precision = Precision::fp16;
      else if (v == "int4") o.precision = Precision::int4;
      else throw_error("-p: unknown precision '", v, "' (fp32, fp16, int4)");
    } else if (a == "-e" || a == "--execution-provider") {
      const std::string& v = value(i);
      if (v == "cpu") o.provider = Provider::cpu;
      else if (v == "dml") o.provider = Provider::dml;
      else if (v == "vulkan") o.provider = Provider::vulkan;
      else throw_error("-e: unknown execution provider '", v, "' (cpu, dml, vulkan)");
    } else if (a == "--block-size") o.block_size = (int)to_int(a, value(i));
    else if (a == "--symmetric") o.symmetric = true;
    else if (a == "--asymmetric") o.symmetric = false;
    else if (a == "--max-length") o.max_length = to_int(a, value(i));
    else if (a == "--random-weights") o.random_weights = true;
    else if (a == "--config") o.config_path = value(i);
    else if (a == "--seed") o.seed = (uint64_t)to_int(a, value(i));
    else if (a == "--threads") o.num_threads = (int)to_int(a, value(i));
    else if (a == "--save-hf") ckpt.dir = value(i);
    else if (a == "--adapter") o.adapter_dir = value(i);
    else if (a == "--merge-adapter") o.merge_adapter = true;
    else if (a == "--save-lora") ckpt.lora_dir = value(i);
    else if (a == "--lora-r") ckpt.lora.rank = to_int(a, value(i));
    else if (a == "--rslora") ckpt.lora.rslora = true;
    else if (a == "--lora-targets") ckpt.lora.targets = split_list(value(i));
    else if (a == "--lora-alpha") {
      const std::string& v = value(i);
      try {
        ckpt.lora.alpha = std::stod(v);
      } catch (...) {
        throw_error("--lora-alpha: expected a number, got '", v, "'");
      }
    }
    else if (a == "--init-std") {
      const std::string& v = value(i);
      try {
        ckpt.init_std = std::stof(v);
      } catch (...) {
        throw_error("--init-std: expected a number, got '", v, "'");
      }
      if (!(ckpt.init_std > 0)) throw_error("--init-std must be positive");
    } else throw_error("unknown option '", a, "'");
  }
  if (o.merge_adapter && o.adapter_dir.empty()) throw_error("--merge-adapter needs --adapter PEFT_DIR");
  if (!ckpt.lora_dir.empty() && o.config_path.empty()) throw_error("--save-lora needs --config SHAPE.json");
  if (!ckpt.dir.empty() || (!ckpt.lora_dir.empty() && out_dir.empty())) {
    if (o.config_path.empty()) throw_error("--save-hf needs --config SHAPE.json");
    return o;
  }
  if (out_dir.empty()) throw_error("missing -o OUT_DIR");
  if (o.input_dir.empty() && o.config_path.empty()) throw_error("missing -i HF_DIR (or --config SHAPE.json)");
  if (!o.config_path.empty()) o.random_weights = true;
  return o;
}

}  // namespace

int cmd_build(const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  try {
    std::string out_dir;
    CheckpointRequest ckpt;
    BuildOptions o = parse(args, out_dir, ckpt);
    if (!ckpt.lora_dir.empty()) {
      ckpt.lora.seed = o.seed + 1;
      ckpt.lora.stddev = ckpt.init_std;
      write_random_lora(o.config_path, ckpt.lora_dir, ckpt.lora);
      std::printf("wrote a random LoRA adapter of %s to %s\n", o.config_path.c_str(), ckpt.lora_dir.c_str());
      if (o.adapter_dir.empty()) o.adapter_dir = ckpt.lora_dir;
      if (ckpt.dir.empty() && out_dir.empty()) return 0;
    }
    if (!ckpt.dir.empty()) {
      write_random_checkpoint(o.config_path, ckpt.dir, o.seed, ckpt.init_std);
      std::printf("wrote a random-weight checkpoint of %s to %s\n", o.config_path.c_str(), ckpt.dir.c_str());
      if (out_dir.empty()) return 0;
      o.config_path.clear();  // then build from the checkpoint just written
      o.random_weights = false;
      o.input_dir = ckpt.dir;
    }
    auto t0 = std::chrono::steady_clock::now();
    BuiltModel m = build_model(o);
    write_model_folder(m, out_dir);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("built %s %s model in %.2f s: %s (%.1f MB of weights)\n", precision_name(o.precision),
                provider_name(o.provider), s, out_dir.c_str(), m.weights.size() / 1e6);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ogx build: %s\n%s", e.what(), kUsage);
    return 2;
  }
}

}  // namespace ogx::builder
