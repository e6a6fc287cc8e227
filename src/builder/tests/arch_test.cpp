// Architectures without Hugging Face goldens (and the golden ones again, as a check of the method): a small
// config of each, derived from a real model's config, gets seeded random weights written as a Hugging Face
// checkpoint (write_random_checkpoint, matrices with std 0.2 so attention, soft-caps and norms are far from
// linear); `ogx build` converts it; ogx runs the folder on the CPU (a 12-token prefill, then 8 single-token
// decode steps, so sliding windows of 6 are crossed in both paths); the logits are compared with an independent
// PyTorch forward pass (torch_reference.py, float64, itself checked against HF's logits on the goldens).
//
// The reference logits are committed (data/arch/*.f32, written by torch_reference.py) so the test runs where
// PyTorch is absent (CI); where /usr/bin/python3 has torch, the reference is recomputed and must equal the
// committed file. OGX_UPDATE_ARCH_FIXTURES=1 rewrites the files from PyTorch; OGX_TEST_NO_TORCH=1 ignores torch.
//
// Tolerances (logits of magnitude ~3-10): fp32 1e-4; fp16-dml 0.1 (fp16 activations, 2 layers); int4-cpu: runs,
// finite logits (4-bit weights change the model; the golden e2e test checks int4 against the reference export).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "builder/builder.h"
#include "builder/cli.h"
#include "genai/generator.h"
#include "test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ogx::builder::test {
namespace {

constexpr int kPrefill = 12, kTotal = 20, kVocab = 256;

json base_config(const char* arch) {
  return {{"architectures", {arch}}, {"hidden_size", 64}, {"intermediate_size", 128}, {"num_hidden_layers", 2},
          {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"vocab_size", kVocab},
          {"max_position_embeddings", 128}, {"rms_norm_eps", 1e-5}, {"hidden_act", "silu"}, {"bos_token_id", 1},
          {"eos_token_id", 2}, {"tie_word_embeddings", false}, {"rope_theta", 10000.0}};
}

// Each derived from the named real config: its distinctive settings kept, sizes shrunk.
json arch_config(const std::string& name) {
  if (name == "llama") {  // Llama-3.2-1B: tied embeddings, Llama-3 RoPE scaling (original context 8192 -> 64)
    json c = base_config("LlamaForCausalLM");
    c["tie_word_embeddings"] = true;
    c["rope_theta"] = 500000.0;
    c["head_dim"] = 16;
    c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 32.0}, {"low_freq_factor", 1.0},
                         {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 64}};
    return c;
  }
  if (name == "mistral") {  // Mistral-7B (v0.1's sliding window 4096 -> 6; v0.3 has none), theta 1e6
    json c = base_config("MistralForCausalLM");
    c["rope_theta"] = 1000000.0;
    c["head_dim"] = 16;
    c["sliding_window"] = 6;
    return c;
  }
  if (name == "qwen2") {  // Qwen2.5-0.5B: q/k/v biases, tied embeddings, no sliding window
    json c = base_config("Qwen2ForCausalLM");
    c["tie_word_embeddings"] = true;
    c["rope_theta"] = 1000000.0;
    c["rms_norm_eps"] = 1e-6;
    c["sliding_window"] = 6;  // ignored: use_sliding_window is false, as in the real config
    c["use_sliding_window"] = false;
    return c;
  }
  if (name == "qwen3") {  // Qwen3-0.6B: q/k norms, head_dim 128 != hidden/heads (here 32 != 16), tied
    json c = base_config("Qwen3ForCausalLM");
    c["head_dim"] = 32;
    c["tie_word_embeddings"] = true;
    c["rope_theta"] = 1000000.0;
    c["rms_norm_eps"] = 1e-6;
    c["attention_bias"] = false;
    c["use_sliding_window"] = true;  // exercised here: slides from max_window_layers on (layer 1)
    c["sliding_window"] = 6;
    c["max_window_layers"] = 1;
    return c;
  }
  if (name == "phi3") {  // Phi-3-mini: fused qkv and gate_up, kv heads = heads, sliding window (2047 -> 6)
    json c = base_config("Phi3ForCausalLM");
    c["num_key_value_heads"] = 4;
    c["sliding_window"] = 6;
    c["pad_token_id"] = 0;
    return c;
  }
  // Gemma-2-2B: head_dim 256 != hidden/heads (here 32), query_pre_attn_scalar = head_dim, gelu-tanh, tied,
  // alternating sliding (4096 -> 6) / global layers; soft-caps 50 / 30 lowered to 2 / 4 so tanh bends here.
  json c = base_config("Gemma2ForCausalLM");
  c["head_dim"] = 32;
  c["query_pre_attn_scalar"] = 32;
  c["hidden_activation"] = "gelu_pytorch_tanh";
  c["hidden_act"] = "gelu_pytorch_tanh";
  c["tie_word_embeddings"] = true;
  c["rms_norm_eps"] = 1e-6;
  c["sliding_window"] = 6;
  c["attn_logit_softcapping"] = 2.0;
  c["final_logit_softcapping"] = 4.0;
  return c;
}

std::vector<int32_t> token_ids() {
  std::vector<int32_t> ids{1};
  for (int i = 1; i < kTotal; i++) ids.push_back(3 + (i * 37 + 11) % (kVocab - 3));
  return ids;
}

// OGX_TEST_NO_TORCH=1 takes CI's path (committed reference) where torch is installed.
bool have_torch() {
  const char* no = std::getenv("OGX_TEST_NO_TORCH");
  if (no && std::string(no) == "1") return false;
  return std::system("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") == 0;
}

std::vector<float> read_f32(const std::string& path) {
  std::string b = read_file(path);
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}

// Logits [kTotal - kPrefill + 1, vocab] from position kPrefill - 1 on: prefill, then one token per step.
std::vector<float> run_ogx(const std::string& dir) {
  genai::Config c = genai::Config::load(dir);
  c.clear_providers();
  auto model = genai::Model::load(c);
  genai::GeneratorParams params(*model);
  params.search.max_length = kTotal + 1;
  genai::Generator gen(model, params);
  std::vector<int32_t> ids = token_ids();
  gen.append_tokens(std::vector<int32_t>(ids.begin(), ids.begin() + kPrefill));
  std::vector<float> out(gen.logits());
  for (int t = kPrefill; t < kTotal; t++) {
    gen.append_tokens({ids[t]});
    out.insert(out.end(), gen.logits().begin(), gen.logits().end());
  }
  return out;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); i++) d = std::max(d, (double)std::fabs(a[i] - b[i]));
  return std::isfinite(d) ? d : INFINITY;
}

int argmax_agreement(const std::vector<float>& a, const std::vector<float>& b) {
  int same = 0;
  for (size_t p = 0; p < a.size() / kVocab; p++) {
    auto ia = std::max_element(a.begin() + p * kVocab, a.begin() + (p + 1) * kVocab) - a.begin();
    auto ib = std::max_element(b.begin() + p * kVocab, b.begin() + (p + 1) * kVocab) - b.begin();
    same += ia == ib;
  }
  return same;
}

class ArchTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ArchTest, OgxBuiltModelMatchesPyTorchReference) {
  const std::string name = GetParam();
  const std::string dir = temp_dir("arch_" + name);
  std::ofstream(dir + "/shape.json") << arch_config(name).dump(2);
  write_random_checkpoint(dir + "/shape.json", dir + "/hf", 1234, 0.2f);

  const std::string fixture = std::string(OGX_BUILDER_TEST_DIR) + "/data/arch/" + name + ".f32";
  const size_t n = (size_t)(kTotal - kPrefill + 1) * kVocab;
  std::vector<float> ref;
  if (have_torch()) {
    std::string ids;
    for (int32_t t : token_ids()) ids += (ids.empty() ? "" : ",") + std::to_string(t);
    std::string cmd = std::string("/usr/bin/python3 ") + OGX_BUILDER_TEST_DIR + "/torch_reference.py " + dir +
                      "/hf --ids " + ids + " --from-pos " + std::to_string(kPrefill - 1) + " --out " + dir + "/ref.f32";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    ref = read_f32(dir + "/ref.f32");
    const char* update = std::getenv("OGX_UPDATE_ARCH_FIXTURES");
    if (update && std::string(update) == "1") {
      fs::create_directories(fs::path(fixture).parent_path());
      fs::copy_file(dir + "/ref.f32", fixture, fs::copy_options::overwrite_existing);
    }
    ASSERT_TRUE(fs::exists(fixture)) << fixture << " missing: run with OGX_UPDATE_ARCH_FIXTURES=1";
    EXPECT_LE(max_diff(ref, read_f32(fixture)), 1e-5) << "PyTorch reference differs from " << fixture;
  } else {
    ASSERT_TRUE(fs::exists(fixture)) << fixture << " missing";
    ref = read_f32(fixture);
    std::cout << "[ reference ] PyTorch absent: committed reference logits " << fixture << "\n";
  }
  ASSERT_EQ(ref.size(), n);

  struct Variant {
    const char *p, *e;
    double tol;
  };
  for (const Variant& v : {Variant{"fp32", "cpu", 1e-4}, Variant{"fp16", "dml", 0.1}, Variant{"int4", "cpu", -1}}) {
    SCOPED_TRACE(name + " " + v.p + "-" + v.e);
    const std::string out = dir + "/" + v.p + "-" + v.e;
    ASSERT_EQ(cmd_build({"-i", dir + "/hf", "-o", out, "-p", v.p, "-e", v.e, "--threads", "2"}), 0);
    std::vector<float> got = run_ogx(out);
    ASSERT_EQ(got.size(), n);
    double d = max_diff(got, ref);
    int agree = argmax_agreement(got, ref);
    std::cout << "[ " << name << " " << v.p << "-" << v.e << " ] max |ogx - PyTorch| = " << d << " over "
              << kTotal - kPrefill + 1 << " positions, argmax equal at " << agree << "\n";
    if (v.tol > 0) {
      EXPECT_LE(d, v.tol);
    } else {
      EXPECT_TRUE(std::isfinite(d)) << "non-finite logits";
    }
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Archs, ArchTest, ::testing::Values("llama", "mistral", "qwen2", "qwen3", "phi3", "gemma2"),
                         [](const auto& i) { return std::string(i.param); });

}  // namespace
}  // namespace ogx::builder::test
