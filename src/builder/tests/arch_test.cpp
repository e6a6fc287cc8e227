// Architectures without Hugging Face goldens (and the golden ones again, as a check of the method): a small
// config of each (data/arch/NAME.json), derived from a real model's config, gets seeded random weights written as a Hugging Face
// checkpoint (write_random_checkpoint, matrices with std 0.2 so attention, soft-caps and norms are far from
// linear); `ogx build` converts it; ogx runs the folder on the CPU (a 12-token prefill, then 8 single-token
// decode steps, so sliding windows of 6 are crossed in both paths); the logits are compared with an independent
// PyTorch forward pass (torch_reference.py, float64, itself checked against HF's logits on the goldens).
//
// The reference logits are committed (data/arch/*.f32, written by torch_reference.py) so the test runs where
// PyTorch is absent (CI); where /usr/bin/python3 has torch, the reference is recomputed and must equal the
// committed file. OGX_UPDATE_ARCH_FIXTURES=1 rewrites the files from PyTorch; OGX_TEST_NO_TORCH=1 ignores torch.
//
// The same checkpoints, folders and reference logits serve the ONNX Runtime GenAI cross-check
// (tools/ortgenai_check). Token ids: 1, then 3 + (37 i + 11) mod 253 for i = 1..19.
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
#include "vulkan_test_config.h"
#include "test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ogx::builder::test {
namespace {

constexpr int kPrefill = 12, kTotal = 20, kVocab = 256;

// data/arch/NAME.json: each derived from a real model's config (its "_derived_from" says which and how): the
// architecture's distinctive settings kept, sizes shrunk.
std::string arch_dir() { return std::string(OGX_BUILDER_TEST_DIR) + "/data/arch/"; }

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
// provider "cpu", or "vulkan" on whatever Vulkan device is present (lavapipe in CI; OGX_TEST_VULKAN_DEVICE=gpu).
// Returns an empty vector when the Vulkan provider has no device.
std::vector<float> run_ogx(const std::string& dir, const std::string& provider = "cpu") {
  genai::Config c = genai::Config::load(dir);
  c.clear_providers();
  if (provider != "cpu") ogx::test::select_vulkan(c, /*validation=*/false);
  std::shared_ptr<genai::Model> model;
  try {
    model = genai::Model::load(c);
  } catch (const Error& e) {
    if (provider != "cpu" && ogx::test::no_vulkan_device(e)) return {};
    throw;
  }
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
  write_random_checkpoint(arch_dir() + name + ".json", dir + "/hf", 1234, 0.2f);

  const std::string fixture = arch_dir() + name + ".f32";
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
    // Every folder on the CPU provider; the fp32 and fp16 ones on the Vulkan provider too (same tolerance).
    for (const char* provider : {"cpu", "vulkan"}) {
      if (std::string(provider) == "vulkan" && v.tol < 0) continue;
      std::vector<float> got = run_ogx(out, provider);
      if (got.empty()) {
        std::cout << "[ " << name << " ] no Vulkan device: Vulkan run skipped\n";
        continue;
      }
      ASSERT_EQ(got.size(), n);
      double d = max_diff(got, ref);
      int agree = argmax_agreement(got, ref);
      std::cout << "[ " << name << " " << v.p << "-" << v.e << " on " << provider << " ] max |ogx - PyTorch| = " << d
                << " over " << kTotal - kPrefill + 1 << " positions, argmax equal at " << agree << "\n";
      if (v.tol > 0) {
        EXPECT_LE(d, v.tol) << provider;
      } else {
        EXPECT_TRUE(std::isfinite(d)) << "non-finite logits";
      }
    }
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Archs, ArchTest, ::testing::Values("llama", "mistral", "qwen2", "qwen3", "phi3", "gemma2"),
                         [](const auto& i) { return std::string(i.param); });

// --repeating-weights: every layer's output projections are zero and lm_head is the embedding, so greedy decoding
// repeats the last prompt token (fp32 and int4), and speculative n-gram decoding on it equals plain decoding while
// accepting its drafts once the repeat is in the context (the benchmark this model exists for, bench/device/run.sh
// spec). The untied (llama) and tied (qwen3) shapes.
TEST(RepeatingWeights, GreedyDecodingRepeatsTheLastTokenAndSpeculationAcceptsIt) {
  for (const char* arch : {"llama", "qwen3"})
    for (const char* precision : {"fp32", "int4"}) {
      SCOPED_TRACE(std::string(arch) + " " + precision);
      const std::string dir = temp_dir(std::string("repeating_") + arch + "_" + precision);
      ASSERT_EQ(cmd_build({"--config", arch_dir() + arch + ".json", "--repeating-weights", "-o", dir, "-p", precision,
                           "-e", "cpu", "--threads", "2"}),
                0);
      genai::Config c = genai::Config::load(dir);
      c.clear_providers();
      auto model = genai::Model::load(c);
      const std::vector<int32_t> prompt = {5, 17, 9, 42, 77, 9, 120};
      auto run = [&](int ngram) {
        genai::GeneratorParams params(*model);
        params.search.max_length = (int)prompt.size() + 24;
        params.search.min_length = params.search.max_length;  // EOS cannot end it early
        if (ngram) params.speculative.set_number("ngram_size", ngram);
        genai::Generator gen(model, params);
        gen.append_tokens(prompt);
        while (!gen.is_done()) gen.generate_next_token();
        const auto* st = gen.speculative_stats();
        return std::make_tuple(gen.sequence(0), st ? st->draft_tokens_proposed : 0, st ? st->draft_tokens_accepted : 0);
      };
      auto [plain, p0, a0] = run(0);
      ASSERT_EQ(plain.size(), prompt.size() + 24);
      for (size_t i = prompt.size(); i < plain.size(); i++) EXPECT_EQ(plain[i], prompt.back()) << "position " << i;
      auto [spec, proposed, accepted] = run(2);
      EXPECT_EQ(spec, plain);
      // The first repeat needs two tokens of it before the 2-gram lookup finds it; then every draft is accepted
      // (max_length cuts the last round's drafts short).
      EXPECT_GE(accepted, 11);
      EXPECT_EQ(accepted, proposed);
      model.reset();
      fs::remove_all(dir);  // (each run's folder had stayed in the temp directory)
    }
}

TEST(RepeatingWeights, NeedsRandomWeights) {
  EXPECT_NE(cmd_build({"-i", "/nonexistent", "--repeating-weights", "-o", temp_dir("repeating_usage")}), 0);
}

}  // namespace
}  // namespace ogx::builder::test
