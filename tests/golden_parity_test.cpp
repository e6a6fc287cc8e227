// Token parity on the golden models (../shared/golden/models): every model, variant and prompt, greedy, EOS
// suppressed, against ONNX Runtime GenAI's tokens (ort_reference.json). The decoder is teacher-forced along the
// reference sequence; each step's argmax must equal the reference token, except that the first differing step
// may be a demonstrated near-tie: the reference token's logit within the variant's tolerance of our maximum.
// After such a step the sequences legitimately part and the rest is not compared.
//
// The same cases run on the Vulkan provider (alias dml) when a Vulkan device is present — Mesa lavapipe in CI
// (hardware_device_type=cpu), the GPU when OGX_TEST_VULKAN_DEVICE=gpu — with validation layers on: any validation
// message fails the test. Without a device the Vulkan cases skip with the reason.
//
// Tolerances (logit units; logits here are of magnitude ~5):
//  fp32: none — every token must match.
//  fp16: 0.02 — fp16 storage of activations gives last-logit differences up to 0.015 against fp32 (shared/README).
//  int4: 0.05 — int4-cpu quantizes activations to int8 per block (accuracy_level 4); summation order differs
//        between implementations, and the measured gaps at the divergences are listed in the test output.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "genai/generator.h"
#include "shared_dir.h"
#include "vulkan_test_config.h"
#ifdef OGX_HAVE_VULKAN
#include "providers/vulkan/instance.h"
#endif

namespace ogx::test {
namespace {

using json = nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f);
}

double tolerance(const std::string& variant) {
  if (variant.rfind("fp32", 0) == 0) return 0.0;
  if (variant.rfind("fp16", 0) == 0) return 0.02;
  return 0.05;
}

struct Param {
  std::string model, variant, provider;
  std::string tuning = "";  // Vulkan tuning overrides (provider option `tuning`): another routing of the same ops
};

class GoldenParity : public ::testing::TestWithParam<Param> {};

std::shared_ptr<genai::Model> load_cpu(const std::string& dir) {
  genai::Config c = genai::Config::load(dir);
  c.clear_providers();  // the reference ran every variant on ONNX Runtime's CPU provider
  return genai::Model::load(c);
}

// The folder on the Vulkan provider through its DirectML name, as a DirectML user would select it.
std::shared_ptr<genai::Model> load_vulkan(const std::string& dir, const std::string& tuning) {
  genai::Config c = genai::Config::load(dir);
  select_vulkan(c, /*validation=*/true);
  if (!tuning.empty()) c.set_provider_option("dml", "tuning", tuning);
  return genai::Model::load(c);
}

int validation_messages() {
#ifdef OGX_HAVE_VULKAN
  return vk::Instance::validation_message_count();
#else
  return 0;
#endif
}

// Loads the variant for the parameter's provider; false (test skipped) when no Vulkan device is present.
bool load_for(const Param& p, const std::string& dir, std::shared_ptr<genai::Model>* out) {
  if (p.provider == "cpu") {
    *out = load_cpu(dir);
    return true;
  }
  try {
    *out = load_vulkan(dir, p.tuning);
  } catch (const Error& e) {
    if (no_vulkan_device(e)) return false;
    throw;
  }
  return true;
}

TEST_P(GoldenParity, GreedyTokensMatchReference) {
  OGX_REQUIRE_SHARED();
  const Param& p = GetParam();
  std::string base = shared_dir() + "/golden/models/" + p.model;
  OGX_REQUIRE_SHARED_PATH(base + "/" + p.variant);
  json ref = read_json(base + "/reference.json");
  json ort = read_json(base + "/ort_reference.json");
  std::shared_ptr<genai::Model> model;
  int messages_before = validation_messages();
  if (!load_for(p, base + "/" + p.variant, &model)) GTEST_SKIP() << "no Vulkan device (install Mesa lavapipe)";
  const auto& eos = model->config().model.eos_token_ids;
  double tol = tolerance(p.variant);
  const json& cases = ref["cases"];
  for (size_t ci = 0; ci < cases.size(); ci++) {
    std::vector<int32_t> prompt = cases[ci]["prompt"].get<std::vector<int32_t>>();
    std::vector<int32_t> expect = ort["tokens"][p.variant][ci].get<std::vector<int32_t>>();
    genai::GeneratorParams params(*model);
    params.search.max_length = (int)(prompt.size() + expect.size() + 1);
    genai::Generator gen(model, params);
    gen.append_tokens(prompt);
    for (size_t step = 0; step < expect.size(); step++) {
      std::vector<float> l = gen.logits();
      for (int e : eos) l[e] = -INFINITY;
      int32_t ours = genai::argmax(l);
      if (ours != expect[step]) {
        double gap = l[ours] - l[expect[step]];
        std::cout << "[ near-tie check ] " << p.model << "/" << p.variant << " prompt " << ci << " step " << step
                  << ": ours " << ours << " (" << l[ours] << ") vs reference " << expect[step] << " ("
                  << l[expect[step]] << "), gap " << gap << ", tolerance " << tol << "\n";
        EXPECT_LE(gap, tol) << p.model << "/" << p.variant << " prompt " << ci << " differs at step " << step
                            << " by more than a near-tie";
        break;
      }
      gen.append_tokens({expect[step]});
    }
  }
  EXPECT_EQ(validation_messages(), messages_before) << "Vulkan validation reported problems";
}

std::vector<Param> all_params() {
  std::vector<Param> v;
  for (const char* prov : {"cpu", "vulkan"})
    for (const char* m : {"llama", "qwen2", "phi3"})
      for (const char* var : {"fp32-cpu", "fp16-dml", "int4-cpu", "int4-dml"}) v.push_back({m, var, prov});
  // int4 decode with each norm computed once into scratch instead of in the matvec's prologue
  for (const char* m : {"llama", "qwen2", "phi3"}) v.push_back({m, "int4-dml", "vulkan", "q4_norm_prologue=0"});
  // ... with a whole 32-value chunk's products summed in packed fp16 (16 per lane) before fp32
  for (const char* m : {"llama", "qwen2", "phi3"}) v.push_back({m, "int4-dml", "vulkan", "q4_wide_half_acc=4"});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenParity, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<Param>& i) {
                           std::string n = i.param.provider + "_" + i.param.model + "_" + i.param.variant +
                                           (i.param.tuning.empty()                      ? ""
                                            : i.param.tuning == "q4_norm_prologue=0" ? "_norm_unfused"
                                                                                     : "_half_acc4");
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// Last-prompt-position logits against Hugging Face fp32 (logits_p*.f32): fp32 within 1e-4, fp16 within 5e-2.
TEST(GoldenLogits, LastPromptLogitsMatchHuggingFace) {
  OGX_REQUIRE_SHARED();
  for (const char* m : {"llama", "qwen2", "phi3"}) {
    std::string base = shared_dir() + "/golden/models/" + m;
    json ref = read_json(base + "/reference.json");
    for (const char* var : {"fp32-cpu", "fp16-dml"}) {
      double tol = std::string(var) == "fp32-cpu" ? 1e-4 : 5e-2;
      auto model = load_cpu(base + "/" + var);
      for (auto& c : ref["cases"]) {
        std::ifstream f(base + "/" + c["last_logits_file"].get<std::string>(), std::ios::binary);
        std::vector<float> hf(model->config().model.vocab_size);
        f.read((char*)hf.data(), (std::streamsize)(hf.size() * 4));
        ASSERT_TRUE(f) << "cannot read " << c["last_logits_file"];
        genai::GeneratorParams params(*model);
        genai::Generator gen(model, params);
        gen.append_tokens(c["prompt"].get<std::vector<int32_t>>());
        ASSERT_EQ(gen.logits().size(), hf.size());
        double worst = 0;
        for (size_t i = 0; i < hf.size(); i++) worst = std::max(worst, (double)std::fabs(gen.logits()[i] - hf[i]));
        EXPECT_LE(worst, tol) << m << "/" << var << " " << c["last_logits_file"];
      }
    }
  }
}

}  // namespace
}  // namespace ogx::test
