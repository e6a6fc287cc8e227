// ogx bench (MODEL_DIR | --synthetic SHAPE.json [--precision fp32|fp16|int4]) --prompt-len P --gen-len G
//   [--batch B] [--num-beams N] [--repeats R] [--provider P] [--provider-option K=V]... [--threads N] [--json]
//   [--speculative ngram|DRAFT_DIR [--draft-tokens K]] [--prompt-period N]
// --speculative: speculative decoding with n-gram (prompt-lookup, ngram_size 3) drafting or the draft model folder
// DRAFT_DIR (same provider and options, same tokenizer vocabulary), K drafted tokens per round (default 4); the
// JSON gains its statistics. --prompt-period N: the prompt repeats its first N random ids (a repetitive prompt).
// --synthetic builds the model of a Hugging Face config's exact shape with seeded random weights in memory.
// Prefill and decode speed (median over repeats) on seeded random prompt ids, and peak resident memory. --batch B
// runs B different prompts of P ids as one batch (greedy: B tokens per step; aggregate decode tokens/s = B x steps
// / time), --num-beams N beam search over them (B x N rows per step; tokens/s still counts B per step); both report
// the time per decode step and the KV cache bytes per sequence (all its rows, at max_length = P + G).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "commands.h"
#include "genai/generator.h"
#include "builder/builder.h"
#include "model_options.h"
#include "onnx/loader.h"

namespace ogx::cli {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Peak resident set size of this process in MiB (VmHWM).
double peak_rss_mib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

// Serves the built model's weight bytes as its external data file, keeping the build alive.
class BuiltWeights : public ExternalDataSource {
 public:
  explicit BuiltWeights(std::shared_ptr<builder::BuiltModel> m) : m_(std::move(m)) {}
  std::shared_ptr<Storage> get(const std::string&) override {
    return Storage::borrow(m_->weights.data(), m_->weights.size(), m_);
  }

 private:
  std::shared_ptr<builder::BuiltModel> m_;
};

std::shared_ptr<genai::Model> synthetic_model(const Args& a) {
  builder::BuildOptions o;
  o.config_path = a.get("synthetic");
  o.random_weights = true;
  std::string p = a.get("precision", "fp16");
  if (p == "fp32") o.precision = builder::Precision::fp32;
  else if (p == "fp16") o.precision = builder::Precision::fp16;
  else if (p == "int4") o.precision = builder::Precision::int4;
  else throw_error("--precision must be fp32, fp16 or int4, got '", p, "'");
  std::string prov = a.get("provider", "cpu");
  o.provider = genai::canonical_provider(prov) == "cpu" ? builder::Provider::cpu : builder::Provider::vulkan;
  auto built = std::make_shared<builder::BuiltModel>(builder::build_model(o));
  BuiltWeights src(built);
  auto graph = load_model_proto(built->model, "", &src);
  built->model.Clear();  // the graph IR holds what it needs; weights stay alive through the storage
  genai::Config c = genai::Config::parse(built->genai_config.dump(), "");
  c.clear_providers();  // the build's provider entry is replaced by the command line's choice (default cpu)
  apply_model_options(c, a);
  return genai::Model::load(c, graph);
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
  std::set<std::string> vals = kModelValueFlags;
  vals.insert({"prompt-len", "gen-len", "repeats", "synthetic", "precision", "batch", "num-beams", "speculative",
               "draft-tokens", "prompt-period"});
  Args a(argv, vals, {"json"});
  bool synthetic = a.has("synthetic");
  OGX_CHECK(a.positional().size() == (synthetic ? 0u : 1u),
            "usage: ogx bench (MODEL_DIR | --synthetic SHAPE.json [--precision P]) --prompt-len P --gen-len G "
            "[--batch B] [--num-beams N] [--json]");
  const std::string dir = synthetic ? a.get("synthetic") : a.positional()[0];
  int P = a.get_int("prompt-len", 128), G = a.get_int("gen-len", 128), R = a.get_int("repeats", 3);
  int B = a.get_int("batch", 1), beams = a.get_int("num-beams", 1);
  OGX_CHECK(P >= 1 && G >= 1 && R >= 1, "--prompt-len, --gen-len and --repeats must be >= 1");
  OGX_CHECK(B >= 1 && B <= genai::Generator::kMaxBatchSize, "--batch must be in [1, ", genai::Generator::kMaxBatchSize,
            "], got ", B);
  OGX_CHECK(beams >= 1 && beams <= genai::Generator::kMaxBeams, "--num-beams must be in [1, ",
            genai::Generator::kMaxBeams, "], got ", beams);
  using Clock = std::chrono::steady_clock;
  auto load0 = Clock::now();
  const std::string spec = a.get("speculative", "");
  std::shared_ptr<genai::Model> model;
  if (synthetic) {
    model = synthetic_model(a);
  } else {
    genai::Config c = model_config(dir, a);
    if (!spec.empty() && spec != "ngram") {  // a draft model folder, on the target's provider
      genai::check_same_vocabulary(dir, spec);
      genai::Config dc = genai::Config::load(spec);
      c.model.draft = dc.model.decoder;
      c.model.draft->filename = std::filesystem::absolute(std::filesystem::path(spec) / dc.model.decoder.filename).string();
      c.model.draft->session = c.model.decoder.session;
    }
    model = genai::Model::load(c);
  }
  double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - load0).count();
  int vocab = model->io().vocab_size > 0 ? model->io().vocab_size : 1000;
  std::mt19937 rng(1234);
  std::vector<int32_t> prompt((size_t)B * P);  // B prompts of P ids, one after the other
  for (auto& t : prompt) t = (int32_t)(rng() % (uint32_t)vocab);
  if (int period = a.get_int("prompt-period", 0); period > 0)
    for (size_t i = 0; i < prompt.size(); i++) prompt[i] = prompt[i % (size_t)period];
  genai::SpeculativeStats spec_stats;
  std::vector<double> prefill, decode, step_ms;
  bool on_device = false;  // tokens picked on the device (only ids come back per step)
  auto make_params = [&](int max_length) {
    genai::GeneratorParams params(*model);
    params.search.max_length = max_length;
    params.search.do_sample = false;
    params.search.batch_size = B;
    params.search.num_beams = beams;
    if (spec == "ngram") params.speculative.ngram_size = 3;
    if (!spec.empty()) params.speculative.max_draft_tokens = a.get_int("draft-tokens", 4);
    return params;
  };
  {  // warm-up (untimed): first-use costs such as pipeline compilation and recording the step
    genai::GeneratorParams params = make_params(P + 3);
    genai::Generator gen(model, params);
    gen.append_tokens(prompt);
    for (int i = 0; i < 3 && !gen.is_done(); i++) gen.generate_next_token();
  }
  for (int r = 0; r < R; r++) {
    genai::GeneratorParams params = make_params(P + G);
    genai::Generator gen(model, params);
    auto t0 = Clock::now();
    gen.append_tokens(prompt);
    auto t1 = Clock::now();
    gen.generate_next_token();  // from the prefill logits
    auto t2 = Clock::now();
    int n = 0;
    while (!gen.is_done() && n < G - 1) {
      gen.generate_next_token();
      n++;
    }
    auto t3 = Clock::now();
    on_device = gen.samples_on_device();
    if (const genai::SpeculativeStats* st = gen.speculative_stats()) spec_stats = *st;
    prefill.push_back((double)B * P / std::chrono::duration<double>(t1 - t0).count());
    if (n > 0) {
      double sec = std::chrono::duration<double>(t3 - t2).count();
      decode.push_back((double)B * n / sec);
      step_ms.push_back(sec * 1e3 / n);
    }
  }
  nlohmann::json j;
  j["model"] = dir;
  if (synthetic) j["precision"] = a.get("precision", "fp16");
  j["provider"] = model->provider();
  j["prompt_len"] = P;
  j["gen_len"] = G;
  j["batch"] = B;
  j["num_beams"] = beams;
  j["repeats"] = R;
  j["load_ms"] = load_ms;
  j["prefill_tok_s"] = median(prefill);
  j["decode_tok_s"] = median(decode);  // aggregate over the batch's sequences
  j["decode_step_ms"] = median(step_ms);
  j["samples_on_device"] = on_device;
  if (!spec.empty()) {
    j["speculative"]["drafting"] = spec == "ngram" ? "ngram" : "draft model";
    for (auto& [k, v] : spec_stats.items()) j["speculative"][k] = v;  // of the last repeat
  }
  // KV cache per sequence (its num_beams rows) at max_length = P + G: layers x (key, value) x heads x head size.
  const genai::DecoderIO& io = model->io();
  double kv_token = 2.0 * io.num_layers * io.kv_heads * io.head_size * (double)dtype_size(io.kv_dtype);
  j["kv_bytes_per_token"] = kv_token;
  j["kv_bytes_per_sequence"] = kv_token * beams * (P + G);
  j["peak_rss_mib"] = peak_rss_mib();
  // Bandwidth bound of decode: every constant read by a node other than an embedding lookup is read once per
  // token; constants only Gather / GatherBlockQuantized read (tables, their scales and zero points) cost one row. A
  // table shared with the lm_head (tied embeddings, directly or through a Reshape/Transpose) counts once.
  const Graph& g = model->session().graph();
  std::vector<char> read_whole(g.values.size(), 0);
  for (auto& n : g.nodes) {
    bool lookup = n.op_type == "Gather" || n.op_type == "GatherBlockQuantized";
    for (int v : n.inputs)
      if (v >= 0 && !lookup) read_whole[v] = 1;
  }
  double weight_bytes = 0;
  for (size_t v = 0; v < g.values.size(); v++)
    if (g.values[v].is_constant && read_whole[v]) weight_bytes += (double)g.values[v].constant.bytes();
  j["weight_bytes_per_token"] = weight_bytes;
  j["decode_gb_s"] = weight_bytes * (double)j["decode_tok_s"] / B / 1e9;  // weights read once per step
  for (auto& [k, v] : model->session().stats()) {
    j["session"][k] = v;
    // What a session-owned cache (Vulkan) holds per sequence: its capacity in positions, for each of its rows.
    if (k == "kv_capacity") j["kv_bytes_per_sequence_allocated"] = kv_token * beams * v;
  }
  if (a.has("json")) {
    std::cout << j.dump() << std::endl;
  } else {
    std::printf("prefill %.1f tokens/s, decode %.1f tokens/s (median of %d), peak RSS %.1f MiB, load %.0f ms\n",
                (double)j["prefill_tok_s"], (double)j["decode_tok_s"], R, (double)j["peak_rss_mib"], load_ms);
    if (B > 1 || beams > 1)
      std::printf("batch %d x %d beams: %.3f ms per decode step, KV cache %.2f MiB per sequence (%d tokens)\n", B,
                  beams, (double)j["decode_step_ms"], (double)j["kv_bytes_per_sequence"] / (1 << 20), P + G);
  }
  return 0;
}

}  // namespace ogx::cli
