// ogx check MODEL_DIR [--provider vulkan] [--provider-option K=V]... [--prompt-lengths 1,2,7,33,129]
//   [--new-tokens 32] [--seed S] [--tolerance REL] [--require-no-fallback] [--threads N] [--json]
//
// Model-level differential check: runs a folder on the CPU provider (the reference) and on a GPU provider side by
// side. For each prompt length (random ids, seeded; plus one past the sliding window where the model has one) the
// CPU picks N greedy tokens (EOS suppressed) and the GPU provider is teacher-forced along them, so every step
// compares logits of the same context. A step where the two argmaxes differ is a divergence: a NEAR-TIE when the
// CPU's top-2 margin at that step is within the precision's tolerance (rounding may flip it), else a FAILURE. The
// GPU's own greedy generation (device sampling, queued steps) must give the CPU's tokens up to the first
// divergence. Nodes the GPU provider ran on the CPU (per-node fallback) are reported.
//
// Tolerances, relative to the logit scale (max |logit| of the CPU at that step, at least 1):
// - fp32 activations: 1e-4. Both providers compute in fp32 with different summation orders; over a 2-layer model
//   at hidden 64 the measured max |logit difference| is ~1e-6 relative, so a margin above 1e-4 is not rounding.
// - fp16 activations (fp16 folders, int4 folders for dml, whose MatMulNBits dequantizes to fp16): 2e-2. fp16 has
//   a relative step of 2^-11 = 4.9e-4 and every intermediate (norm outputs, projections, attention, residual adds)
//   is rounded to it; the CPU and Vulkan kernels round at different points (fp32 accumulators vs per-op fp16 stores,
//   fused vs unfused ops), giving logit differences of ~1e-3 to 1e-2 of the logit scale on these models; logits are
//   themselves fp16, so ties of one fp16 step (as the 4.5742 vs 4.5742) are expected.
// - int4 with int8 activations (accuracy_level 4, int4 cpu folders): 5e-2. Both providers quantize activations per
//   block to int8 the same way (round half to even of x * 127 / amax) and agree to ~1e-6 where no element sits on a
//   rounding tie (llama, phi3 goldens). But with int4-quantized tied embeddings (qwen2) and unit norm weights, an
//   embedding row's normalized values keep int4 ratios, so x * 127 / amax lands exactly on .5 (4/8 * 127 = 63.5): a
//   1-ulp difference in the norm (summation order) rounds it the other way, one int8 step (1/127 of the block's
//   max) that the next layers carry. Measured on the qwen2 int4-cpu golden: the first qkv projection differs only
//   in the BOS row, logits by up to 7% of their scale, top-2 flips at margins up to 0.073 (1.5%).
// - int4 with fp32 activations (accuracy_level 0): 1e-3 (weights dequantize exactly; fp32 arithmetic after).
// A step whose logits differ by more than a second bound (relative to the scale, whatever the argmaxes do) is a
// FAILURE too: it catches a wrong kernel that happens not to flip a token. Bounds: fp32 1e-3, fp16 and int4-fp16
// 8e-2, int4-int8 0.25, int4-fp32 1e-2. Measured maxima over the 12 golden folders (prompts of 1..129 tokens, 32
// new tokens) and 36 ogx-built folders (prompts 1..90): fp32 3.3e-6, fp16 4.8e-3, int4-fp16 4.8e-3, int4-int8
// 7.1e-2 (the qwen2 rounding tie above; 1.5e-2 on llama and phi3 at longer prompts).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>

#include "commands.h"
#include "genai/generator.h"
#include "model_options.h"

namespace ogx::cli {
namespace {

using nlohmann::json;

struct Precision {
  std::string name;    // fp32, fp16, int4-fp16, int4-int8, int4-fp32
  double tolerance;    // top-2 margin below which a divergence is a near-tie, relative to the logit scale
  double logit_bound;  // max |logit difference| at any step, relative to the logit scale
};

// What the graph computes in: the logits' dtype and, for MatMulNBits, the activations' (accuracy_level 4: int8).
Precision precision_of(const Graph& g, const std::string& logits) {
  const ValueInfo* out = g.output_info(logits);
  bool fp16 = out && out->dtype == DType::f16;
  int nbits = 0, level = 0;
  for (const Node& n : g.nodes)
    if (n.op_type == "MatMulNBits") {
      nbits = (int)n.attr_int("bits", 4);
      level = std::max(level, (int)n.attr_int("accuracy_level", 0));
    }
  if (nbits == 0) return fp16 ? Precision{"fp16", 2e-2, 8e-2} : Precision{"fp32", 1e-4, 1e-3};
  if (fp16) return {"int4-fp16", 2e-2, 8e-2};
  if (level == 4) return {"int4-int8", 5e-2, 0.25};
  return {"int4-fp32", 1e-3, 1e-2};
}

// The largest GroupQueryAttention local_window_size (-1: none).
int sliding_window(const Graph& g) {
  int w = -1;
  for (const Node& n : g.nodes)
    if (n.op_type == "GroupQueryAttention") w = std::max(w, (int)n.attr_int("local_window_size", -1));
  return w;
}

struct Top2 {
  int32_t id[2] = {-1, -1};
  float value[2] = {-INFINITY, -INFINITY};
  double margin() const { return (double)value[0] - (double)value[1]; }
};

Top2 top2(const std::vector<float>& l, const std::set<int>& banned) {
  Top2 t;
  for (int32_t i = 0; i < (int32_t)l.size(); i++) {
    if (banned.count(i)) continue;
    if (l[i] > t.value[0]) {
      t.id[1] = t.id[0], t.value[1] = t.value[0];
      t.id[0] = i, t.value[0] = l[i];
    } else if (l[i] > t.value[1]) {
      t.id[1] = i, t.value[1] = l[i];
    }
  }
  return t;
}

json top2_json(const Top2& t) {
  return json::array({json::array({t.id[0], t.value[0]}), json::array({t.id[1], t.value[1]})});
}

std::vector<int> parse_lengths(const std::string& s) {
  std::vector<int> r;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = std::min(s.find(',', pos), s.size());
    std::string item = s.substr(pos, comma - pos);
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    OGX_CHECK(!item.empty() && *end == 0 && v > 0 && v < (1 << 20), "--prompt-lengths: '", item,
              "' is not a positive length (give e.g. 1,2,7,33,129)");
    r.push_back((int)v);
    pos = comma + 1;
  }
  return r;
}

// One prompt: CPU greedy tokens with the GPU provider teacher-forced along them, then the GPU's own generation.
json check_prompt(const std::shared_ptr<genai::Model>& cpu, const std::shared_ptr<genai::Model>& gpu,
                  const std::vector<int32_t>& prompt, int new_tokens, const std::set<int>& eos, double rel_tol,
                  double logit_bound, int* failures, int* near_ties) {
  genai::GeneratorParams pc(*cpu), pg(*gpu);
  pc.search.max_length = pg.search.max_length = (int)prompt.size() + new_tokens + 1;
  pc.search.do_sample = pg.search.do_sample = false;
  genai::Generator gc(cpu, pc), gg(gpu, pg);
  gc.append_tokens(prompt);
  gg.append_tokens(prompt);
  std::vector<int32_t> tokens;
  json divergences = json::array();
  double worst_diff = 0, worst_rel = 0;
  for (int step = 0; step < new_tokens; step++) {
    std::vector<float> lc = gc.logits(), lg = gg.logits();
    OGX_CHECK(lc.size() == lg.size(), "the providers' logits differ in size: ", lc.size(), " vs ", lg.size());
    double scale = 1, diff = 0;
    for (size_t i = 0; i < lc.size(); i++) {
      scale = std::max(scale, (double)std::fabs(lc[i]));
      diff = std::max(diff, (double)std::fabs(lc[i] - lg[i]));
    }
    worst_diff = std::max(worst_diff, diff);
    worst_rel = std::max(worst_rel, diff / scale);
    Top2 c = top2(lc, eos), g = top2(lg, eos);
    if (c.id[0] != g.id[0]) {
      double tol = rel_tol * scale;
      bool fail = c.margin() > tol;
      (fail ? *failures : *near_ties) += 1;
      divergences.push_back({{"step", step},
                             {"cpu_top2", top2_json(c)},
                             {"cpu_margin", c.margin()},
                             {"tolerance", tol},
                             {"gpu_top2", top2_json(g)},
                             {"verdict", fail ? "FAILURE" : "NEAR-TIE"}});
    }
    tokens.push_back(c.id[0]);
    if (step + 1 < new_tokens) {
      gc.append_tokens({c.id[0]});
      gg.append_tokens({c.id[0]});
    }
  }
  // The GPU provider's own greedy generation (its device sampling and queued steps where it has them).
  genai::GeneratorParams pf(*gpu);
  pf.search.do_sample = false;
  pf.search.max_length = (int)prompt.size() + new_tokens;
  pf.search.min_length = pf.search.max_length;  // EOS suppressed
  genai::Generator gf(gpu, pf);
  gf.append_tokens(prompt);
  std::vector<int32_t> free_run;
  while (!gf.is_done()) {
    gf.generate_next_token();
    free_run.push_back(gf.last_token());
  }
  size_t agree_until = divergences.empty() ? tokens.size() : (size_t)divergences[0]["step"].get<int>();
  bool free_ok = free_run.size() >= agree_until && std::equal(tokens.begin(), tokens.begin() + (long)agree_until,
                                                              free_run.begin());
  if (!free_ok) *failures += 1;
  bool logits_ok = worst_rel <= logit_bound;
  if (!logits_ok) *failures += 1;
  std::string verdict = "PASS";
  for (auto& d : divergences)
    if (d["verdict"] == "FAILURE") verdict = "FAILURE";
  if (!free_ok || !logits_ok) verdict = "FAILURE";
  if (verdict == "PASS" && !divergences.empty()) verdict = "NEAR-TIE";
  return {{"prompt_length", prompt.size()},
          {"cpu_tokens", tokens},
          {"gpu_generated", free_run},
          {"gpu_generation_matches", free_ok},
          {"divergences", divergences},
          {"max_abs_logit_diff", worst_diff},
          {"max_rel_logit_diff", worst_rel},
          {"logits_within_bound", logits_ok},
          {"verdict", verdict},
          {"device_sampling", gf.samples_on_device()}};
}

struct CheckOptions {
  std::string dir;                              // MODEL_DIR
  std::string prompt_lengths = "1,2,7,33,129";  // --prompt-lengths
  int new_tokens = 32;
  int seed = 1234;
  std::optional<double> tolerance;              // --tolerance REL (default: the precision's)
  bool json = false, require_no_fallback = false;
  ModelOptions model;                           // --provider defaults to vulkan here
};

int run_check(const CheckOptions& a);

}  // namespace

Runner define_check(Flags& flags) {
  auto o = std::make_shared<CheckOptions>();
  flags.positional("MODEL_DIR", o->dir, "model folder").required();
  flags.option("--prompt-lengths", o->prompt_lengths, "random prompts of these lengths");
  flags.option("--new-tokens", o->new_tokens, "greedy tokens per prompt");
  flags.option("--seed", o->seed, "seed of the random prompts");
  flags.option("--tolerance", o->tolerance, "near-tie margin relative to the logit scale (default: by precision)");
  flags.flag("--require-no-fallback", o->require_no_fallback, "fail when a node falls back to the CPU");
  add_model_options(flags, o->model);
  flags.flag("--json", o->json, "print one JSON object");
  return [o] { return run_check(*o); };
}

namespace {

int run_check(const CheckOptions& a) {
  const std::string& dir = a.dir;
  std::string provider = a.model.provider.empty() ? "vulkan" : a.model.provider;
  OGX_CHECK(genai::canonical_provider(provider) != "cpu", "ogx check compares the CPU provider with a GPU provider: "
            "--provider must be vulkan or dml");
  std::vector<int> lengths = parse_lengths(a.prompt_lengths);
  int new_tokens = a.new_tokens;
  OGX_CHECK(new_tokens > 0, "--new-tokens must be positive");
  uint32_t seed = (uint32_t)a.seed;
  bool json_out = a.json;

  genai::Config cc = genai::Config::load(dir);
  cc.clear_providers();
  if (a.model.threads) cc.model.decoder.session.intra_op_num_threads = *a.model.threads;
  genai::Config gc = genai::Config::load(dir);
  gc.clear_providers();
  gc.append_provider(provider);
  ModelOptions gpu_options = a.model;
  gpu_options.provider = provider;
  apply_model_options(gc, gpu_options);
  ProgressBar bar(a.model.quiet || json_out);
  auto cpu = genai::Model::load(cc);
  auto gpu = genai::Model::load(gc);

  const Graph& g = cpu->session().graph();
  Precision prec = precision_of(g, cc.model.decoder.logits);
  double rel_tol = a.tolerance.value_or(prec.tolerance);
  int window = sliding_window(g);
  int vocab = cc.model.vocab_size;
  OGX_CHECK(vocab > 0, dir, "/genai_config.json: model.vocab_size is missing (the prompts are random ids below it)");
  std::set<int> eos(cc.model.eos_token_ids.begin(), cc.model.eos_token_ids.end());
  int context = cc.search.max_length > 0 ? cc.search.max_length : cc.model.context_length;
  if (window > 0 && std::all_of(lengths.begin(), lengths.end(), [&](int l) { return l + new_tokens <= window; }))
    lengths.push_back(window + 1);  // past the sliding window
  json prompts = json::array(), skipped = json::array();
  int failures = 0, near_ties = 0;
  for (int len : lengths) {
    if (context > 0 && len + new_tokens > context) {
      skipped.push_back({{"prompt_length", len}, {"reason", "longer than the context (" + std::to_string(context) + ")"}});
      continue;
    }
    std::mt19937 rng(seed + (uint32_t)len);
    std::vector<int32_t> prompt;
    while ((int)prompt.size() < len) {
      int32_t id = (int32_t)(rng() % (uint32_t)vocab);
      if (!eos.count(id)) prompt.push_back(id);
    }
    json r = check_prompt(cpu, gpu, prompt, new_tokens, eos, rel_tol, prec.logit_bound, &failures, &near_ties);
    if (!json_out) {
      std::printf("prompt %4d: %-8s max |dlogit| %.3g (%.2g of the logit scale)", len,
                  r["verdict"].get<std::string>().c_str(), r["max_abs_logit_diff"].get<double>(),
                  r["max_rel_logit_diff"].get<double>());
      if (!r["divergences"].empty()) {
        const json& d = r["divergences"][0];
        std::printf("; first divergence at step %d: cpu top-2 %s margin %.4g (tolerance %.3g), %s top-2 %s",
                    d["step"].get<int>(), d["cpu_top2"].dump().c_str(), d["cpu_margin"].get<double>(),
                    d["tolerance"].get<double>(), provider.c_str(), d["gpu_top2"].dump().c_str());
      }
      if (!r["gpu_generation_matches"].get<bool>()) std::printf("; its own generation parts from the CPU's tokens");
      if (!r["logits_within_bound"].get<bool>())
        std::printf("; logits differ beyond %.2g of their scale", prec.logit_bound);
      std::printf("\n");
    }
    prompts.push_back(std::move(r));
  }
  json fallback = json::object();
  int fallback_nodes = 0;
  for (auto& [k, v] : gpu->session().stats()) {
    if (k == "fallback_nodes") fallback_nodes = (int)v;
    if (k.rfind("fallback_op ", 0) == 0) fallback[k.substr(12)] = (int)v;
  }
  bool fallback_fails = a.require_no_fallback && fallback_nodes > 0;
  std::string verdict = failures || fallback_fails ? "FAILURE" : near_ties ? "NEAR-TIE" : "PASS";
  if (json_out) {
    json j = {{"model", dir},
              {"provider", provider},
              {"precision", prec.name},
              {"tolerance_rel", rel_tol},
              {"logit_bound_rel", prec.logit_bound},
              {"sliding_window", window},
              {"new_tokens", new_tokens},
              {"prompts", prompts},
              {"skipped", skipped},
              {"fallback_nodes", fallback_nodes},
              {"fallback_ops", fallback},
              {"failures", failures},
              {"near_ties", near_ties},
              {"verdict", verdict}};
    std::cout << j.dump() << std::endl;
  } else {
    for (auto& s : skipped)
      std::printf("prompt %4d: skipped (%s)\n", s["prompt_length"].get<int>(), s["reason"].get<std::string>().c_str());
    std::printf("%s: %s on %s, %s (tolerance %.2g of the logit scale), %d failure(s), %d near-tie(s), %d node(s) "
                "fell back to the CPU%s%s\n",
                verdict.c_str(), dir.c_str(), provider.c_str(), prec.name.c_str(), rel_tol, failures, near_ties,
                fallback_nodes, fallback_nodes ? " " : "", fallback_nodes ? fallback.dump().c_str() : "");
  }
  return verdict == "FAILURE" ? 1 : 0;
}

}  // namespace

}  // namespace ogx::cli
