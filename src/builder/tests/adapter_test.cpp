// LoRA adapters end to end: the .onnx_adapter format (round trip, malformed files), `ogx build --adapter` (a random
// PEFT LoRA written in PEFT's layout, exported as graph inputs + an adapter file, and merged into the weights), and
// the runtime (genai::Adapters): with an adapter active, greedy tokens equal the merged-weights model's; with none,
// the base model's; two adapters served at once by interleaved generators; unloading an adapter in use fails. On
// the CPU provider and on the Vulkan provider (lavapipe in CI; skipped without a Vulkan device), fp32 and int4, for
// llama, qwen2 (biases, tied embeddings) and phi3 (fused qkv / gate_up projections, whose LoRA B is sliced).
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "builder/builder.h"
#include "builder/lora.h"
#include "common/half.h"
#include "genai/adapters.h"
#include "genai/batch_step.h"
#include "genai/engine.h"
#include "genai/generator.h"
#include "test_util.h"
#include "vulkan_test_config.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ogx::builder::test {
namespace {

// ---- the file format -------------------------------------------------------------------------------------------

AdapterFile sample_adapter() {
  AdapterFile f;
  f.adapter_version = 3;
  f.model_version = 7;
  Tensor a(DType::f32, {5, 3});
  for (int i = 0; i < 15; i++) a.data<float>()[i] = 0.25f * i - 1.0f;
  Tensor b(DType::f16, {3, 4});
  for (int i = 0; i < 12; i++) b.data<uint16_t>()[i] = f32_to_f16(0.5f * i);
  Tensor empty(DType::f32, {5, 0});
  f.parameters = {{"layer.lora_A.weight", a}, {"layer.lora_B.weight", b}, {"zero_rank", empty}};
  return f;
}

TEST(AdapterFormat, RoundTrip) {
  AdapterFile f = sample_adapter();
  std::vector<uint8_t> bytes = serialize_adapter(f);
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(0, std::memcmp(bytes.data() + 4, "TORT", 4));  // the file identifier ONNX Runtime checks
  auto keep = std::make_shared<std::vector<uint8_t>>(bytes);
  AdapterFile g = parse_adapter_bytes(keep->data(), keep->size(), keep, "round trip");
  EXPECT_EQ(g.format_version, kAdapterFormatVersion);
  EXPECT_EQ(g.adapter_version, 3);
  EXPECT_EQ(g.model_version, 7);
  ASSERT_EQ(g.parameters.size(), f.parameters.size());
  for (size_t i = 0; i < f.parameters.size(); i++) {
    EXPECT_EQ(g.parameters[i].name, f.parameters[i].name);
    EXPECT_EQ(g.parameters[i].tensor.dtype(), f.parameters[i].tensor.dtype());
    EXPECT_EQ(g.parameters[i].tensor.shape(), f.parameters[i].tensor.shape());
    ASSERT_EQ(g.parameters[i].tensor.bytes(), f.parameters[i].tensor.bytes());
    if (f.parameters[i].tensor.bytes()) {
      EXPECT_EQ(0, std::memcmp(g.parameters[i].tensor.raw(), f.parameters[i].tensor.raw(), f.parameters[i].tensor.bytes()));
    }
    // raw_data is force_align 8 in ONNX Runtime's schema: the tensors borrow the file in place.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(g.parameters[i].tensor.raw()) % 8, 0u);
  }
  // Through a file (memory-mapped).
  std::string dir = temp_dir("adapter_format");
  write_adapter_file(f, dir + "/a.onnx_adapter");
  AdapterFile h = read_adapter_file(dir + "/a.onnx_adapter");
  ASSERT_EQ(h.parameters.size(), 3u);
  EXPECT_FLOAT_EQ(h.parameters[0].tensor.data<float>()[14], 0.25f * 14 - 1.0f);
  fs::remove_all(dir);
}

// Every truncation, and bytes flipped all over the file: an ogx::Error naming the input, never a crash (ASan
// in the sanitizer stage; fuzz_adapter_file explores further).
TEST(AdapterFormat, MalformedFilesFailCleanly) {
  const std::vector<uint8_t> good = serialize_adapter(sample_adapter());
  for (size_t n = 0; n < good.size(); n++) {
    auto cut = std::make_shared<std::vector<uint8_t>>(good.begin(), good.begin() + n);
    try {
      parse_adapter_bytes(cut->data(), cut->size(), cut, "cut");
      ADD_FAILURE() << "a file cut to " << n << " of " << good.size() << " bytes parsed";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'cut'"), std::string::npos) << e.what();
    }
  }
  int refused = 0;
  for (size_t i = 0; i < good.size(); i++)
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      auto bad = std::make_shared<std::vector<uint8_t>>(good);
      (*bad)[i] ^= flip;
      try {
        AdapterFile f = parse_adapter_bytes(bad->data(), bad->size(), bad, "flipped");
        for (auto& p : f.parameters) ASSERT_EQ(p.tensor.bytes(), p.tensor.numel() * dtype_size(p.tensor.dtype()));
      } catch (const Error&) {
        refused++;
      }
    }
  EXPECT_GT(refused, 0);
  auto text = std::make_shared<std::vector<uint8_t>>(std::vector<uint8_t>{'n', 'o', 't', ' ', 'a', 'n', ' ', 'a', 'd'});
  EXPECT_THROW(parse_adapter_bytes(text->data(), text->size(), text, "text"), Error);
  EXPECT_THROW(read_adapter_file("/nonexistent/x.onnx_adapter"), Error);
}

// A dims entry changed so that raw_data no longer holds shape x dtype bytes: refused, naming the parameter.
TEST(AdapterFormat, SizeMismatchNamesParameter) {
  AdapterFile f;
  Tensor t(DType::f32, {7, 11});
  std::memset(t.raw(), 0, t.bytes());
  f.parameters = {{"p0", t}};
  auto bytes = std::make_shared<std::vector<uint8_t>>(serialize_adapter(f));
  const int64_t seven = 7;
  auto it = std::search(bytes->begin(), bytes->end(), (const uint8_t*)&seven, (const uint8_t*)&seven + 8);
  ASSERT_NE(it, bytes->end());
  const int64_t nine = 9;
  std::memcpy(&*it, &nine, 8);
  try {
    parse_adapter_bytes(bytes->data(), bytes->size(), bytes, "edited");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'p0'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("raw_data"), std::string::npos) << e.what();
  }
}

// ---- builder and runtime ---------------------------------------------------------------------------------------

json tiny_config(const std::string& arch) {
  json c = {{"architectures", {arch}}, {"hidden_size", 64},       {"intermediate_size", 96},
            {"num_hidden_layers", 2},  {"num_attention_heads", 4}, {"num_key_value_heads", 2},
            {"vocab_size", 256},       {"max_position_embeddings", 128}, {"rms_norm_eps", 1e-6},
            {"bos_token_id", 1},       {"eos_token_id", 2},        {"hidden_act", "silu"}};
  if (arch == "Qwen2ForCausalLM") c["tie_word_embeddings"] = true;
  return c;
}

struct Folders {
  std::string root, hf, lora_x, lora_y, with_inputs, merged_x, merged_y, plain, adapter_x, adapter_y;
};

BuildOptions options(const std::string& hf, Precision p, Provider e) {
  BuildOptions o;
  o.input_dir = hf;
  o.precision = p;
  o.provider = e;
  o.num_threads = 2;
  return o;
}

// A random checkpoint (init std 0.1, so that a model's greedy tokens depend on its weights), two random LoRAs
// (different seeds and targets), and the folders: plain, adapter inputs (+ both adapter files), merged with each.
Folders make_folders(const std::string& arch, Precision p, Provider e) {
  Folders f;
  f.root = temp_dir(std::string("lora_") + arch + precision_name(p) + provider_name(e));
  f.hf = f.root + "/hf";
  std::ofstream(f.root + "/config.json") << tiny_config(arch).dump();
  write_random_checkpoint(f.root + "/config.json", f.hf, 11, 0.1f);
  const bool phi3 = arch == "Phi3ForCausalLM";
  RandomLoraOptions x;
  x.rank = 4;
  x.alpha = 8;
  x.seed = 21;
  x.stddev = 0.1f;
  RandomLoraOptions y = x;
  y.rank = 2;
  y.rslora = true;
  y.seed = 22;
  y.targets = phi3 ? std::vector<std::string>{"qkv_proj", "down_proj"} : std::vector<std::string>{"q_proj", "v_proj", "up_proj"};
  f.lora_x = f.root + "/lora_x";
  f.lora_y = f.root + "/lora_y";
  write_random_lora(f.root + "/config.json", f.lora_x, x);
  write_random_lora(f.root + "/config.json", f.lora_y, y);
  auto build = [&](const std::string& out, const std::string& adapter, bool merge) {
    BuildOptions o = options(f.hf, p, e);
    o.adapter_dir = adapter;
    o.merge_adapter = merge;
    write_model_folder(build_model(o), out);
  };
  f.plain = f.root + "/plain";
  f.with_inputs = f.root + "/inputs";
  f.merged_x = f.root + "/merged_x";
  f.merged_y = f.root + "/merged_y";
  build(f.plain, "", false);
  build(f.with_inputs, f.lora_x, false);
  build(f.root + "/inputs_y", f.lora_y, false);  // for its adapter file (same graph inputs, fewer of them)
  build(f.merged_x, f.lora_x, true);
  build(f.merged_y, f.lora_y, true);
  f.adapter_x = f.with_inputs + "/lora_x.onnx_adapter";
  f.adapter_y = f.root + "/inputs_y/lora_y.onnx_adapter";
  return f;
}

std::shared_ptr<genai::Model> load(const std::string& dir, Provider e) {
  genai::Config c = genai::Config::load(dir);
  c.clear_providers();
  if (e != Provider::cpu) ogx::test::select_vulkan(c, /*validation=*/false);
  return genai::Model::load(c);
}

struct GreedyRun {
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> logits;  // before each pick
};

const std::vector<int32_t> kPrompt = {1, 17, 93, 5, 200, 41, 8};
constexpr int kNew = 12;

void step(genai::Generator& g, GreedyRun& r) {
  r.logits.push_back(g.logits());
  g.generate_next_token();
  r.tokens.push_back(g.last_token());
}

GreedyRun greedy(const std::shared_ptr<genai::Model>& m, const std::shared_ptr<genai::Adapters>& a = nullptr,
           const std::string& name = "") {
  genai::GeneratorParams params(*m);
  params.search.max_length = (int)kPrompt.size() + kNew;
  params.search.min_length = params.search.max_length;  // EOS suppressed: always kNew tokens
  genai::Generator g(m, params);
  if (a) g.set_active_adapter(a, name);
  g.append_tokens(kPrompt);
  GreedyRun r;
  while ((int)r.tokens.size() < kNew) step(g, r);
  return r;
}

// The logits of `m` (with adapter `name` active when given) teacher-forced along `ref`'s tokens.
std::vector<std::vector<float>> forced(const std::shared_ptr<genai::Model>& m, const GreedyRun& ref,
                                      const std::shared_ptr<genai::Adapters>& a = nullptr, const std::string& name = "") {
  genai::GeneratorParams params(*m);
  params.search.max_length = (int)kPrompt.size() + kNew;
  genai::Generator g(m, params);
  if (a) g.set_active_adapter(a, name);
  g.append_tokens(kPrompt);
  std::vector<std::vector<float>> out;
  for (int t = 0; t < kNew; t++) {
    out.push_back(g.logits());
    if (t + 1 < kNew) g.append_tokens({ref.tokens[t]});
  }
  return out;
}

double rms_diff(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  double s = 0;
  size_t n = 0;
  for (size_t t = 0; t < a.size(); t++)
    for (size_t i = 0; i < a[t].size(); i++, n++) s += (double)(a[t][i] - b[t][i]) * (a[t][i] - b[t][i]);
  return std::sqrt(s / (double)n);
}

// fp32: the adapter model's greedy tokens equal the merged model's. int4: they cannot in general (the merged model
// quantizes W + sBA, the adapter model adds the float LoRA to Q(W), as the reference builder's graph does; with
// these random weights the two quantizations differ by about a third of what the LoRA changes), so along the
// merged model's tokens the adapter model's logits must be at most half as far from the merged model's as the
// base model's are: the LoRA moved them most of the way. (The LoRA arithmetic itself is checked exactly in fp32.)
void expect_matches_merged(const GreedyRun& got, const GreedyRun& merged, Precision p, const std::string& what,
                           const std::shared_ptr<genai::Model>& inputs, const std::shared_ptr<genai::Model>& plain,
                           const std::shared_ptr<genai::Adapters>& a, const std::string& name) {
  if (p != Precision::int4) {
    EXPECT_EQ(got.tokens, merged.tokens) << what;
    return;
  }
  const double d_adapter = rms_diff(forced(inputs, merged, a, name), merged.logits);
  const double d_base = rms_diff(forced(plain, merged), merged.logits);
  EXPECT_LT(d_adapter, 0.5 * d_base) << what << ": rms logit distance to the merged model " << d_adapter
                                      << ", the base model's " << d_base;
}

struct Case {
  const char* arch;
  Precision p;
  Provider e;
};

class LoraRuntime : public ::testing::TestWithParam<Case> {};

TEST_P(LoraRuntime, AdapterTokensEqualMergedModel) {
  const Case c = GetParam();
  Folders f = make_folders(c.arch, c.p, c.e);
  std::shared_ptr<genai::Model> inputs, plain, merged_x, merged_y;
  try {
    inputs = load(f.with_inputs, c.e);
  } catch (const Error& e) {
    if (c.e != Provider::cpu && ogx::test::no_vulkan_device(e)) GTEST_SKIP() << e.what();
    throw;
  }
  plain = load(f.plain, c.e);
  merged_x = load(f.merged_x, c.e);
  merged_y = load(f.merged_y, c.e);

  // The adapter file: A' = A^T [in, r], B' = (scale B)^T [r, out] per adapted projection, as graph inputs.
  AdapterFile file = read_adapter_file(f.adapter_x);
  ASSERT_FALSE(file.parameters.empty());
  EXPECT_EQ(file.parameters[0].name.rfind("model.layers.0.", 0), 0u) << file.parameters[0].name;
  for (const auto& prm : file.parameters) EXPECT_NE(inputs->session().graph().input_info(prm.name), nullptr) << prm.name;

  // An adapter for inputs a model lacks is refused at load, naming the parameter.
  EXPECT_THROW(genai::Adapters::create(plain)->load(f.adapter_x, "x"), Error);
  auto adapters = genai::Adapters::create(inputs);
  adapters->load(f.adapter_x, "x");
  adapters->load(f.adapter_y, "y");
  EXPECT_THROW(adapters->load(f.adapter_x, "x"), Error);  // the name is taken

  const GreedyRun base = greedy(plain);
  const GreedyRun none = greedy(inputs);  // no adapter: zero-rank defaults = the base model
  EXPECT_EQ(none.tokens, base.tokens);
  const GreedyRun rx = greedy(inputs, adapters, "x"), ry = greedy(inputs, adapters, "y");
  const GreedyRun mx = greedy(merged_x), my = greedy(merged_y);
  EXPECT_NE(mx.tokens, base.tokens) << "the random adapter does not change the tokens: the test would prove nothing";
  expect_matches_merged(rx, mx, c.p, "adapter x", inputs, plain, adapters, "x");
  expect_matches_merged(ry, my, c.p, "adapter y", inputs, plain, adapters, "y");

  // Two generators, each with its own adapter, stepped in turn (they share the model's session).
  genai::GeneratorParams params(*inputs);
  params.search.max_length = (int)kPrompt.size() + kNew;
  params.search.min_length = params.search.max_length;
  genai::Generator gx(inputs, params), gy(inputs, params);
  gx.set_active_adapter(adapters, "x");
  gy.set_active_adapter(adapters, "y");
  gx.append_tokens(kPrompt);
  gy.append_tokens(kPrompt);
  GreedyRun ix, iy;
  while ((int)ix.tokens.size() < kNew) {
    step(gx, ix);
    step(gy, iy);
  }
  EXPECT_EQ(ix.tokens, rx.tokens) << "interleaved generator with adapter x";
  EXPECT_EQ(iy.tokens, ry.tokens) << "interleaved generator with adapter y";

  // decode_together (the engine's step): generators with the same adapter share one model run (the adapter's
  // tensors passed once), each other adapter (and none) its own; every generator's tokens equal its solo run. On a
  // provider that keeps KV caches (Vulkan) that is 3 runs per step for x, x, y, none; the CPU runs each alone.
  {
    auto session_runs = [&] {
      for (auto& [k, v] : inputs->session().stats())
        if (k == "runs") return v;
      return -1.0;
    };
    std::vector<std::unique_ptr<genai::Generator>> gens;
    std::vector<const GreedyRun*> want;
    for (auto [name, w] : {std::pair<const char*, const GreedyRun*>{"x", &rx}, {"x", &rx}, {"y", &ry}, {"", &none}}) {
      gens.push_back(std::make_unique<genai::Generator>(inputs, params));
      if (*name) gens.back()->set_active_adapter(adapters, name);
      gens.back()->append_tokens(kPrompt);
      want.push_back(w);
    }
    std::vector<genai::Generator*> ptrs;
    for (auto& g : gens) ptrs.push_back(g.get());
    genai::decode_together(ptrs);  // the first tokens, from the prompts' logits
    const double before = session_runs();
    int steps = 0;
    while (!gens[0]->is_done()) {
      genai::decode_together(ptrs);
      steps++;
    }
    for (size_t i = 0; i < gens.size(); i++) {
      std::vector<int32_t> got(gens[i]->sequence().begin() + kPrompt.size(), gens[i]->sequence().end());
      EXPECT_EQ(got, want[i]->tokens) << "decode_together generator " << i;
    }
    if (c.e != Provider::cpu) {
      EXPECT_EQ(session_runs() - before, 3.0 * steps) << "x and x share a run; y and none run on their own";
    }
  }

  // In an engine (continuous batching, as `ogx serve --adapter` runs it): requests with adapter x, adapter y and
  // none share the running set (their steps grouped by adapter, as above), and each request's tokens equal its
  // adapter's solo run.
  {
    genai::Engine engine(inputs, genai::EngineOptions{8, 256, nullptr});
    std::vector<std::pair<std::shared_ptr<genai::Request>, const GreedyRun*>> reqs;
    for (auto [name, want] : {std::pair<const char*, const GreedyRun*>{"x", &rx}, {"y", &ry}, {"", &none}, {"x", &rx}}) {
      auto r = std::make_shared<genai::Request>(params);
      if (*name) r->set_active_adapter(adapters, name);
      EXPECT_EQ(r->adapter_name(), name);
      r->add_tokens(kPrompt);
      reqs.emplace_back(r, want);
    }
    EXPECT_THROW(reqs[0].first->set_active_adapter(adapters, "y"), Error);  // one adapter per request
    auto missing = std::make_shared<genai::Request>(params);
    EXPECT_THROW(missing->set_active_adapter(adapters, "missing"), Error);
    for (auto& [r, _] : reqs) engine.add_request(r);
    EXPECT_THROW(reqs[1].first->set_active_adapter(adapters, "x"), Error);  // added already
    while (engine.step()) {
    }
    for (size_t i = 0; i < reqs.size(); i++) {
      std::vector<int32_t> got;
      reqs[i].first->take_unseen_tokens(got);
      EXPECT_NE(reqs[i].first->finish_reason(), genai::FinishReason::error) << reqs[i].first->error();
      EXPECT_EQ(got, reqs[i].second->tokens) << "engine request " << i << " (adapter '"
                                             << reqs[i].first->adapter_name() << "')";
    }
  }
  if (c.e != Provider::cpu && c.p == Precision::fp32 && std::string(c.arch) == "LlamaForCausalLM") {
    // Vulkan: two generators take turns, on a fresh session each time, with the same adapter (x, x) and with two
    // adapters of one rank (x, and x's file loaded again: other host tensors). Switching adapters every step
    // records no more steps than not switching (the session re-runs a generator's positions when the other ran in
    // between, which records prompt steps either way), uploads each adapter tensor once, and copies device slots.
    struct Turns {
      double recordings, uploads, copies;
      std::vector<int32_t> a, b;
    };
    auto turns = [&](const char* second) {
      auto m = load(f.with_inputs, c.e);
      auto ad = genai::Adapters::create(m);
      ad->load(f.adapter_x, "x");
      ad->load(f.adapter_x, "x2");
      genai::GeneratorParams gp(*m);
      gp.search.max_length = gp.search.min_length = (int)kPrompt.size() + kNew;
      genai::Generator ga(m, gp), gb(m, gp);
      ga.set_active_adapter(ad, "x");
      gb.set_active_adapter(ad, second);
      ga.append_tokens(kPrompt);
      gb.append_tokens(kPrompt);
      GreedyRun ra, rb;
      while ((int)ra.tokens.size() < kNew) {
        step(ga, ra);
        step(gb, rb);
      }
      auto stat = [&](const char* key) {
        for (auto& [k, v] : m->session().stats())
          if (k == key) return v;
        return -1.0;
      };
      return Turns{stat("recordings"), stat("weight_input_uploads"), stat("weight_input_slot_copies"), ra.tokens,
                   rb.tokens};
    };
    const Turns same = turns("x"), other = turns("x2");
    EXPECT_EQ(other.a, rx.tokens);
    EXPECT_EQ(other.b, rx.tokens);
    EXPECT_EQ(other.recordings, same.recordings) << "switching adapters recorded steps";
    EXPECT_EQ(same.uploads, (double)file.parameters.size());       // x's tensors, once
    EXPECT_EQ(other.uploads, 2.0 * file.parameters.size());        // x's and x2's
    EXPECT_GT(other.copies, same.copies);
    std::printf("vulkan, two generators taking turns: same adapter %g recordings %g slot copies; two adapters %g "
                "recordings %g slot copies\n", same.recordings, same.copies, other.recordings, other.copies);
  }

  // A batch of two prompts (right-padded) with adapter x: each row equals the merged model's batch row.
  if (c.p == Precision::fp32) {
    auto batch = [&](const std::shared_ptr<genai::Model>& m, bool with_adapter) {
      genai::GeneratorParams bp(*m);
      bp.search.batch_size = 2;
      bp.search.max_length = bp.search.min_length = (int)kPrompt.size() + kNew;
      genai::Generator g(m, bp);
      if (with_adapter) g.set_active_adapter(adapters, "x");
      g.append_token_sequences({kPrompt, {1, 5, 9}});
      while (!g.is_done()) g.generate_next_token();
      return std::vector<std::vector<int32_t>>{g.sequence(0), g.sequence(1)};
    };
    EXPECT_EQ(batch(inputs, true), batch(merged_x, false)) << "batch of two with adapter x";
  }

  // In use: unloading fails (naming the adapter); once the generators are gone it succeeds.
  try {
    adapters->unload("x");
    ADD_FAILURE() << "unloaded an adapter in use";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gx.set_active_adapter(adapters, "missing"), Error);
  fs::remove_all(f.root);
}

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  std::string a = i.param.arch;
  return a.substr(0, a.find("For")) + "_" + precision_name(i.param.p) + "_" + provider_name(i.param.e);
}

INSTANTIATE_TEST_SUITE_P(Cpu, LoraRuntime,
                         ::testing::Values(Case{"LlamaForCausalLM", Precision::fp32, Provider::cpu},
                                           Case{"LlamaForCausalLM", Precision::int4, Provider::cpu},
                                           Case{"Qwen2ForCausalLM", Precision::fp32, Provider::cpu},
                                           Case{"Phi3ForCausalLM", Precision::fp32, Provider::cpu},
                                           Case{"Phi3ForCausalLM", Precision::int4, Provider::cpu}),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Vulkan, LoraRuntime,
                         ::testing::Values(Case{"LlamaForCausalLM", Precision::fp32, Provider::dml},
                                           Case{"LlamaForCausalLM", Precision::int4, Provider::dml},
                                           Case{"Phi3ForCausalLM", Precision::fp32, Provider::dml}),
                         case_name);

// Unused adapter tensors, a missing config and unsupported PEFT features are build errors naming the problem.
TEST(LoraBuild, BadAdaptersFailCleanly) {
  std::string root = temp_dir("lora_bad");
  std::ofstream(root + "/config.json") << tiny_config("LlamaForCausalLM").dump();
  write_random_checkpoint(root + "/config.json", root + "/hf", 1, 0.02f);
  RandomLoraOptions o;
  write_random_lora(root + "/config.json", root + "/lora", o);
  BuildOptions b = options(root + "/hf", Precision::fp32, Provider::cpu);
  b.adapter_dir = root + "/missing";
  EXPECT_THROW(build_model(b), Error);
  json cfg;
  std::ifstream(root + "/lora/adapter_config.json") >> cfg;
  cfg["use_dora"] = true;
  std::ofstream(root + "/lora/adapter_config.json") << cfg.dump();
  b.adapter_dir = root + "/lora";
  try {
    build_model(b);
    ADD_FAILURE() << "DoRA accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("use_dora"), std::string::npos) << e.what();
  }
  // An adapter made for a deeper model adapts layers this one lacks.
  json deep = tiny_config("LlamaForCausalLM");
  deep["num_hidden_layers"] = 3;
  std::ofstream(root + "/deep.json") << deep.dump();
  write_random_lora(root + "/deep.json", root + "/lora_deep", o);
  b.adapter_dir = root + "/lora_deep";
  try {
    build_model(b);
    ADD_FAILURE() << "an adapter of another shape accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layers.2"), std::string::npos) << e.what();
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace ogx::builder::test
