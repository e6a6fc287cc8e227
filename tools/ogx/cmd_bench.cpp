// ogx bench (MODEL_DIR | --synthetic SHAPE.json [--precision fp32|fp16|int4]) --prompt-len P --gen-len G
//   [--batch B] [--num-beams N] [--repeats R] [--provider P] [--provider-option K=V]... [--threads N] [--json]
//   [--speculative ngram|DRAFT_DIR [--draft-tokens K] [--ngram-chained]] [--prompt-period N] [--generators N] [--temperature T]
//   [--top-k K] [--top-p P] [--repetition-penalty R] [--frequency-penalty F]
// --temperature T: pick as `ogx serve` does for an OpenAI request with temperature T (T > 0: sampling with top_k 0,
// top_p 1, seeded; 0: greedy; no repetition penalty) instead of the folder's greedy search, to compare with
// bench/serve_load.py at the same temperature; --top-k / --top-p narrow that sampling (the device sampler's
// truncated path, what a request with top_p < 1 takes).
// --speculative: speculative decoding with n-gram (prompt-lookup, ngram_size 3) drafting or the draft model folder
// DRAFT_DIR (same provider and options, same tokenizer vocabulary), K drafted tokens per round (default 4); the
// JSON gains its statistics; --ngram-chained: n-gram lookups chained (the speculative option ngram_chained_lookup:
// look up again after each proposed token, so a round can draft K tokens). --prompt-period N: the prompt repeats its first N random ids (a repetitive prompt).
// --synthetic builds the model of a Hugging Face config's exact shape with seeded random weights in memory.
// Prefill and decode speed (median over repeats) on seeded random prompt ids, and peak resident memory. --batch B
// runs B different prompts of P ids as one batch (greedy: B tokens per step; aggregate decode tokens/s = B x steps
// / time), --num-beams N beam search over them (B x N rows per step; tokens/s still counts B per step); both report
// the time per decode step and the KV cache bytes per sequence (all its rows, at max_length = P + G). The JSON's
// decode_step_gb_s: weights plus the KV bytes a step reads (kv_read_bytes_per_step) over the step time.
// --generators N: N independent generators (prompts of P * (i + 1) / N ids: different lengths) decoded together
// (genai/batch_step.h: one model run per step for all on the Vulkan provider, one per generator on the CPU; each
// step queues the next on the device where every row picks there, as the Engine's steps do); aggregate decode
// tokens/s over all of them, time per step, and the KV pool's bytes per sequence.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "commands.h"
#include "genai/batch_step.h"
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

struct BenchOptions {
  std::string dir;                   // MODEL_DIR (empty with --synthetic)
  std::string synthetic;             // --synthetic SHAPE.json
  std::string precision = "fp16";    // --precision of the synthetic model
  int prompt_len = 128, gen_len = 128, repeats = 3, batch = 1, num_beams = 1;
  int generators = 0;                // --generators N (0: off)
  float temperature = -1;            // --temperature T (< 0: not given: greedy with the folder's options)
  int top_k = 0;                     // --top-k K with --temperature T > 0 (0: every token)
  float top_p = 1;                   // --top-p P with --temperature T > 0
  float repetition_penalty = 1.0f;   // --repetition-penalty R (1: off)
  float frequency_penalty = 0.0f;    // --frequency-penalty F (0: off)
  std::string speculative;           // --speculative ngram|DRAFT_DIR
  int draft_tokens = 4;              // --draft-tokens K
  bool ngram_chained = false;        // --ngram-chained
  int prompt_period = 0;             // --prompt-period N
  bool json = false;
  ModelOptions model;
};

std::shared_ptr<genai::Model> synthetic_model(const BenchOptions& a) {
  builder::BuildOptions o;
  o.config_path = a.synthetic;
  o.random_weights = true;
  const std::string& p = a.precision;
  if (p == "fp32") o.precision = builder::Precision::fp32;
  else if (p == "fp16") o.precision = builder::Precision::fp16;
  else if (p == "int4") o.precision = builder::Precision::int4;
  else throw_error("--precision must be fp32, fp16 or int4, got '", p, "'");
  std::string prov = a.model.provider.empty() ? "cpu" : a.model.provider;
  o.provider = genai::canonical_provider(prov) == "cpu" ? builder::Provider::cpu : builder::Provider::vulkan;
  auto built = std::make_shared<builder::BuiltModel>(builder::build_model(o));
  BuiltWeights src(built);
  auto graph = load_model_proto(built->model, "", &src);
  built->model.Clear();  // the graph IR holds what it needs; weights stay alive through the storage
  genai::Config c = genai::Config::parse(built->genai_config.dump(), "");
  c.clear_providers();  // the build's provider entry is replaced by the command line's choice (default cpu)
  apply_model_options(c, a.model);
  return genai::Model::load(c, graph);
}

double session_stat(const genai::Model& m, const std::string& name) {
  for (auto& [k, v] : m.session().stats())
    if (k == name) return v;
  return 0;
}

// --temperature T: each sequence picks as an OpenAI request with temperature T does in `ogx serve` (T > 0: sampling
// with top_k 0, top_p 1, seeded; 0: greedy; no repetition penalty either way). Not given (< 0): greedy with the
// folder's other search options.
void set_picking(genai::GeneratorParams& params, double temperature, int seed, int top_k = 0, double top_p = 1) {
  params.search.do_sample = temperature > 0;
  if (temperature < 0) return;
  params.search.repetition_penalty = 1.0;
  if (temperature == 0) return;
  params.search.temperature = std::max(temperature, genai::kMinTemperature);
  params.search.top_k = top_k;
  params.search.top_p = top_p;
  params.search.random_seed = seed;
}

// --repetition-penalty / --frequency-penalty: every sequence's logits processed so (the cost of penalties).
void set_penalties(genai::GeneratorParams& params, double repetition, double frequency) {
  if (repetition != 1.0) params.search.repetition_penalty = repetition;
  if (frequency != 0.0) params.search.frequency_penalty = frequency;
}

// --generators N: N generators of prompts P * (i + 1) / N ids, decoded together for G tokens each.
nlohmann::json bench_generators(const std::shared_ptr<genai::Model>& model, int N, int P, int G, int R, double T,
                                int top_k, double top_p, double repetition, double frequency) {
  using Clock = std::chrono::steady_clock;
  int vocab = model->io().vocab_size > 0 ? model->io().vocab_size : 1000;
  std::mt19937 rng(1234);
  std::vector<std::vector<int32_t>> prompts(N);
  for (int i = 0; i < N; i++) {
    prompts[i].resize((size_t)std::max(1, P * (i + 1) / N));
    for (auto& t : prompts[i]) t = (int32_t)(rng() % (uint32_t)vocab);
  }
  std::vector<double> prefill, decode, step_ms;
  double kv_bytes = 0;
  for (int r = 0; r <= R; r++) {  // r == 0: warm-up (pipelines, recorded steps), untimed
    const int gen_len = r == 0 ? 3 : G;
    std::vector<std::unique_ptr<genai::Generator>> gens;
    std::vector<genai::Generator*> ptrs;
    auto t0 = Clock::now();
    size_t prompt_tokens = 0;
    for (auto& p : prompts) {
      genai::GeneratorParams params(*model);
      params.search.max_length = (int)p.size() + gen_len;
      set_picking(params, T, 1234 + (int)gens.size(), top_k, top_p);
      set_penalties(params, repetition, frequency);
      gens.push_back(std::make_unique<genai::Generator>(model, params));
      gens.back()->append_tokens(p);
      ptrs.push_back(gens.back().get());
      prompt_tokens += p.size();
    }
    auto t1 = Clock::now();
    genai::decode_together(ptrs);  // the first tokens, from the prompts' logits
    auto t2 = Clock::now();
    size_t before = 0, after = 0, steps = 0;
    for (auto* g : ptrs) before += g->token_count();
    for (bool any = true; any; steps++) {
      genai::decode_together(ptrs, /*queue_ahead=*/true);  // as the Engine steps: the device runs one step ahead
      any = false;
      for (auto* g : ptrs) any = any || !g->is_done();
    }
    auto t3 = Clock::now();
    for (auto* g : ptrs) after += g->token_count();
    if (r == 0) continue;
    kv_bytes = session_stat(*model, "kv_pool_blocks_held") * session_stat(*model, "kv_pool_block_bytes") / N;
    prefill.push_back((double)prompt_tokens / std::chrono::duration<double>(t1 - t0).count());
    double sec = std::chrono::duration<double>(t3 - t2).count();
    decode.push_back((double)(after - before) / sec);
    step_ms.push_back(sec * 1e3 / (double)steps);
  }
  nlohmann::json j;
  j["generators"] = N;
  if (T >= 0) j["temperature"] = T;
  j["prefill_tok_s"] = median(prefill);
  j["decode_tok_s"] = median(decode);  // aggregate over the generators
  j["decode_step_ms"] = median(step_ms);
  j["kv_pool_bytes_per_sequence"] = kv_bytes;  // blocks held at the end of a run, per generator
  return j;
}

int run_bench(const BenchOptions& a);

}  // namespace

Runner define_bench(Flags& flags) {
  auto o = std::make_shared<BenchOptions>();
  flags.positional("MODEL_DIR", o->dir, "model folder");
  flags.option("--synthetic", o->synthetic, "a Hugging Face config.json: its shape with seeded random weights");
  flags.choice("--precision", o->precision, "precision of the --synthetic model", {"fp32", "fp16", "int4"});
  flags.option("--prompt-len", o->prompt_len, "prompt length P (random ids)");
  flags.option("--gen-len", o->gen_len, "new tokens G");
  flags.option("--repeats", o->repeats, "timed runs (the median is reported)");
  flags.option("--batch", o->batch, "B prompts as one batch");
  flags.option("--num-beams", o->num_beams, "beam search over N beams");
  flags.option("--generators", o->generators, "N generators of different prompt lengths decoded together");
  flags.option("--temperature", o->temperature, "pick as an OpenAI request with this temperature (0: greedy)");
  flags.option("--top-k", o->top_k, "with --temperature > 0: sample from the K most likely tokens (0: all)");
  flags.option("--top-p", o->top_p, "with --temperature > 0: sample from the smallest set with probability P");
  flags.option("--repetition-penalty", o->repetition_penalty, "process every sequence's logits with this repetition "
               "penalty (1: off)");
  flags.option("--frequency-penalty", o->frequency_penalty, "... with this frequency penalty (0: off)");
  flags.option("--speculative", o->speculative, "speculative decoding: ngram or a draft model folder");
  flags.option("--draft-tokens", o->draft_tokens, "tokens drafted per round (--speculative)");
  flags.flag("--ngram-chained", o->ngram_chained, "n-gram lookups chained after each proposed token");
  flags.option("--prompt-period", o->prompt_period, "the prompt repeats its first N random ids (repetitive)");
  add_model_options(flags, o->model);
  flags.flag("--json", o->json, "print one JSON object");
  return [o] { return run_bench(*o); };
}

namespace {

int run_bench(const BenchOptions& a) {
  const bool synthetic = !a.synthetic.empty();
  if (synthetic == !a.dir.empty()) throw UsageError("give exactly one of MODEL_DIR and --synthetic SHAPE.json");
  const std::string dir = synthetic ? a.synthetic : a.dir;
  int P = a.prompt_len, G = a.gen_len, R = a.repeats;
  int B = a.batch, beams = a.num_beams;
  OGX_CHECK(P >= 1 && G >= 1 && R >= 1, "--prompt-len, --gen-len and --repeats must be >= 1");
  OGX_CHECK(B >= 1 && B <= genai::Generator::kMaxBatchSize, "--batch must be in [1, ", genai::Generator::kMaxBatchSize,
            "], got ", B);
  OGX_CHECK(a.temperature < 0 || a.temperature <= 100, "--temperature must be in [0, 100], got ", a.temperature);
  OGX_CHECK(a.top_k >= 0 && a.top_p > 0 && a.top_p <= 1, "--top-k must be >= 0 and --top-p in (0, 1], got ", a.top_k,
            " and ", a.top_p);
  OGX_CHECK((a.top_k == 0 && a.top_p == 1) || a.temperature > 0, "--top-k / --top-p need --temperature > 0");
  OGX_CHECK(a.repetition_penalty > 0 && a.repetition_penalty <= 10 && std::fabs(a.frequency_penalty) <= 2,
            "--repetition-penalty must be in (0, 10] and --frequency-penalty in [-2, 2], got ", a.repetition_penalty,
            " and ", a.frequency_penalty);
  OGX_CHECK(beams >= 1 && beams <= genai::Generator::kMaxBeams, "--num-beams must be in [1, ",
            genai::Generator::kMaxBeams, "], got ", beams);
  using Clock = std::chrono::steady_clock;
  ProgressBar bar(a.model.quiet);  // stderr only: --json output on stdout stays one line
  auto load0 = Clock::now();
  const std::string spec = a.speculative;
  std::shared_ptr<genai::Model> model;
  if (synthetic) {
    model = synthetic_model(a);
  } else {
    genai::Config c = model_config(dir, a.model);
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
  if (a.generators != 0) {
    const int N = a.generators;
    OGX_CHECK(N >= 1 && N <= 256, "--generators must be in [1, 256], got ", N);
    OGX_CHECK(B == 1 && beams == 1, "--generators runs one sequence per generator: no --batch or --num-beams");
    nlohmann::json j = bench_generators(model, N, P, G, R, a.temperature, a.top_k, a.top_p, a.repetition_penalty,
                                        a.frequency_penalty);
    j["model"] = dir;
    if (synthetic) j["precision"] = a.precision;
    j["provider"] = model->provider();
    j["prompt_len"] = P;  // the longest prompt; generator i has P * (i + 1) / N ids
    j["gen_len"] = G;
    j["repeats"] = R;
    j["load_ms"] = load_ms;
    j["peak_rss_mib"] = peak_rss_mib();
    for (auto& [k, v] : model->session().stats()) j["session"][k] = v;
    if (a.json) std::cout << j.dump() << std::endl;
    else
      std::printf("%d generators together: decode %.1f tokens/s aggregate, %.3f ms per step, prefill %.1f tokens/s, "
                  "KV pool %.2f MiB per sequence\n", N, (double)j["decode_tok_s"], (double)j["decode_step_ms"],
                  (double)j["prefill_tok_s"], (double)j["kv_pool_bytes_per_sequence"] / (1 << 20));
    return 0;
  }
  int vocab = model->io().vocab_size > 0 ? model->io().vocab_size : 1000;
  std::mt19937 rng(1234);
  std::vector<int32_t> prompt((size_t)B * P);  // B prompts of P ids, one after the other
  for (auto& t : prompt) t = (int32_t)(rng() % (uint32_t)vocab);
  if (int period = a.prompt_period; period > 0)
    for (size_t i = 0; i < prompt.size(); i++) prompt[i] = prompt[i % (size_t)period];
  genai::SpeculativeStats spec_stats;
  std::vector<double> prefill, decode, step_ms;
  bool on_device = false;  // tokens picked on the device (only ids come back per step)
  genai::Generator::BeamStepTimes beam_times;
  auto make_params = [&](int max_length) {
    genai::GeneratorParams params(*model);
    params.search.max_length = max_length;
    set_picking(params, a.temperature, 1234, a.top_k, a.top_p);
    set_penalties(params, a.repetition_penalty, a.frequency_penalty);
    params.search.batch_size = B;
    params.search.num_beams = beams;
    if (spec == "ngram") params.speculative.ngram_size = 3;
    if (spec == "ngram") params.speculative.ngram_chained_lookup = a.ngram_chained;
    if (!spec.empty()) params.speculative.max_draft_tokens = a.draft_tokens;
    return params;
  };
  {  // warm-up (untimed): first-use costs such as pipeline compilation and recording the step (speculative: rounds
     // of the full draft width too, whose verify pass is a step of its own)
    const int warm = spec.empty() ? 3 : 3 * (a.draft_tokens + 1);
    genai::GeneratorParams params = make_params(P + warm);
    genai::Generator gen(model, params);
    gen.append_tokens(prompt);
    for (int i = 0; i < warm && !gen.is_done(); i++) gen.generate_next_token();
  }
  for (int r = 0; r < R; r++) {
    progress::report("bench repeats", (uint64_t)r, (uint64_t)R, progress::Unit::items);
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
    beam_times = gen.beam_step_times();
    if (const genai::SpeculativeStats* st = gen.speculative_stats()) spec_stats = *st;
    prefill.push_back((double)B * P / std::chrono::duration<double>(t1 - t0).count());
    if (n > 0) {
      double sec = std::chrono::duration<double>(t3 - t2).count();
      decode.push_back((double)B * n / sec);
      step_ms.push_back(sec * 1e3 / n);
    }
  }
  progress::report("bench repeats", (uint64_t)R, (uint64_t)R, progress::Unit::items);
  nlohmann::json j;
  j["model"] = dir;
  if (synthetic) j["precision"] = a.precision;
  j["provider"] = model->provider();
  j["prompt_len"] = P;
  j["gen_len"] = G;
  j["batch"] = B;
  if (a.repetition_penalty != 1.0) j["repetition_penalty"] = std::round(a.repetition_penalty * 1e6) / 1e6;
  if (a.frequency_penalty != 0.0) j["frequency_penalty"] = std::round(a.frequency_penalty * 1e6) / 1e6;
  j["num_beams"] = beams;
  j["repeats"] = R;
  j["load_ms"] = load_ms;
  j["prefill_tok_s"] = median(prefill);
  j["decode_tok_s"] = median(decode);  // aggregate over the batch's sequences
  j["decode_step_ms"] = median(step_ms);
  j["samples_on_device"] = on_device;
  if (beam_times.steps > 0) {  // the last repeat's beam steps picked on the device, per step
    const double n = (double)beam_times.steps;
    j["beam_step_ms"] = {{"steps", beam_times.steps}, {"run", beam_times.run_ms / n},
                         {"candidates", beam_times.candidates_ms / n}, {"select", beam_times.select_ms / n},
                         {"reorder", beam_times.reorder_ms / n}};
  }
  if (model->draft())
    for (auto& [k, v] : model->draft()->session().stats()) j["draft_session"][k] = v;
  if (a.temperature >= 0) j["temperature"] = a.temperature;
  if (a.top_k != 0) j["top_k"] = a.top_k;
  if (a.top_p != 1) j["top_p"] = a.top_p;
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
  // Bandwidth bound of decode: what one decode step reads of the constants. A constant read by a node other than a
  // lookup is read whole; tables read one row per token — embeddings read by Gather / GatherBlockQuantized (and their
  // scales and zero points), the rotary cos/sin caches of GroupQueryAttention (inputs 7, 8) and RotaryEmbedding
  // (inputs 2, 3) — count one row (bytes / first dimension). A table also read whole (tied embeddings: the lm_head
  // reads it directly or through a Reshape/Transpose) counts whole, once.
  const Graph& g = model->session().graph();
  std::vector<char> read_whole(g.values.size(), 0), read_row(g.values.size(), 0);
  for (auto& n : g.nodes) {
    const bool lookup = n.op_type == "Gather" || n.op_type == "GatherBlockQuantized";
    const bool rotary_at_7 = n.op_type == "GroupQueryAttention", rotary_at_2 = n.op_type == "RotaryEmbedding";
    for (size_t i = 0; i < n.inputs.size(); i++) {
      const int v = n.inputs[i];
      if (v < 0) continue;
      const bool row = lookup || (rotary_at_7 && (i == 7 || i == 8)) || (rotary_at_2 && (i == 2 || i == 3));
      (row ? read_row : read_whole)[v] = 1;
    }
  }
  double weight_bytes = 0;
  for (size_t v = 0; v < g.values.size(); v++) {
    if (!g.values[v].is_constant) continue;
    const Tensor& t = g.values[v].constant;
    if (read_whole[v]) weight_bytes += (double)t.bytes();
    else if (read_row[v] && t.rank() >= 1 && t.dim(0) > 0) weight_bytes += (double)t.bytes() / (double)t.dim(0);
  }
  j["weight_bytes_per_token"] = weight_bytes;
  j["decode_gb_s"] = weight_bytes * (double)j["decode_tok_s"] / B / 1e9;  // weights read once per step
  // Long context: a decode step also reads every row's cached keys and values, P + G / 2 positions on average over
  // the timed steps; the bytes a step moves (weights + KV) against its time give the fraction of the bandwidth bound.
  const double kv_read = kv_token * B * beams * (P + (G - 1) / 2.0);
  j["kv_read_bytes_per_step"] = kv_read;
  j["decode_step_gb_s"] = (double)j["decode_step_ms"] > 0 ? (weight_bytes + kv_read) / ((double)j["decode_step_ms"] * 1e6)
                                                           : 0.0;
  for (auto& [k, v] : model->session().stats()) j["session"][k] = v;
  if (a.json) {
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

}  // namespace

}  // namespace ogx::cli
