// Long-context rotary variants end to end: a random-weight checkpoint per variant (data/rope: small configs with
// rope_scaling set: linear, llama3, yarn on llama and qwen2, longrope on phi3 with original_max_position_embeddings 8,
// and longrope with partial_rotary_factor 0.75 as Phi-4-mini) built by
// `ogx build` as fp32-cpu (GroupQueryAttention rotates; longrope switches caches with an If on the total length)
// and fp32-dml (RotaryEmbedding nodes; longrope reads one concatenated table with shifted position ids).
// Checks: the two folders give the same logits on the CPU provider (two different graphs of one model; for
// longrope a prompt shorter than the original context followed by decode steps that cross it, and a prompt that
// crosses it at once), each folder gives the same logits on the Vulkan provider (lavapipe in CI), and greedy
// generation gives the same tokens on both providers. The caches themselves are checked against transformers'
// formulas in rope_test.cpp. Tolerance: fp32 logits of magnitude ~3-10 through 2 layers, 1e-4 as arch_test.
#include <cmath>
#include <filesystem>
#include <iostream>

#include "builder/builder.h"
#include "builder/cli.h"
#include "genai/generator.h"
#include "test_util.h"
#include "vulkan_test_config.h"

namespace fs = std::filesystem;

namespace ogx::builder::test {
namespace {

constexpr int kVocab = 256, kTotal = 20;

// data/rope/NAME.json: small configs with a real model family's rope_scaling (its "_derived_from" says which);
// tools/ortgenai_check runs the same folders in ONNX Runtime GenAI.
std::string rope_config(const std::string& name) { return std::string(OGX_BUILDER_TEST_DIR) + "/data/rope/" + name + ".json"; }

std::vector<int32_t> token_ids() {
  std::vector<int32_t> ids{1};
  for (int i = 1; i < kTotal; i++) ids.push_back(3 + (i * 53 + 7) % (kVocab - 3));
  return ids;
}

// Logits of every position from prefill - 1 on: a prompt of `prefill` ids, then one id per step.
std::vector<float> teacher_forced(const std::shared_ptr<genai::Model>& model, int prefill) {
  genai::GeneratorParams params(*model);
  params.search.max_length = kTotal + 1;
  genai::Generator gen(model, params);
  std::vector<int32_t> ids = token_ids();
  gen.append_tokens(std::vector<int32_t>(ids.begin(), ids.begin() + prefill));
  std::vector<float> out(gen.logits());
  for (int t = prefill; t < kTotal; t++) {
    gen.append_tokens({ids[t]});
    out.insert(out.end(), gen.logits().begin(), gen.logits().end());
  }
  return out;
}

std::vector<int32_t> greedy(const std::shared_ptr<genai::Model>& model, int prompt) {
  genai::GeneratorParams params(*model);
  params.search.max_length = 24;
  params.search.min_length = 24;  // EOS suppressed: every run makes 24 - prompt tokens
  genai::Generator gen(model, params);
  std::vector<int32_t> ids = token_ids();
  gen.append_tokens(std::vector<int32_t>(ids.begin(), ids.begin() + prompt));
  while (!gen.is_done()) gen.generate_next_token();
  return gen.sequence(0);
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double d = 0;
  for (size_t i = 0; i < a.size(); i++) d = std::max(d, (double)std::fabs(a[i] - b[i]));
  return std::isfinite(d) ? d : INFINITY;
}

class RopeVariant : public ::testing::TestWithParam<const char*> {};

TEST_P(RopeVariant, CpuAndDmlFoldersAgreeOnBothProviders) {
  const std::string name = GetParam();
  const std::string dir = temp_dir("rope_" + name);
  write_random_checkpoint(rope_config(name), dir + "/hf", 99, 0.2f);
  for (const char* e : {"cpu", "dml"})
    ASSERT_EQ(cmd_build({"-i", dir + "/hf", "-o", dir + "/" + e, "-p", "fp32", "-e", e, "--threads", "2"}), 0);
  if (name == "longrope") {  // the graphs the reference builder makes
    onnx::ModelProto cpu = load_model(dir + "/cpu/model.onnx"), dml = load_model(dir + "/dml/model.onnx");
    auto has = [](const onnx::ModelProto& m, const std::string& op) {
      for (const auto& n : m.graph().node())
        if (n.op_type() == op) return true;
      return false;
    };
    EXPECT_TRUE(has(cpu, "If"));
    EXPECT_FALSE(has(dml, "If"));
    EXPECT_TRUE(has(dml, "ReduceMax"));
  }
  // Prompts: 5 ids (below original_max_position_embeddings 8 of the longrope config; decode steps cross it) and
  // 12 ids (past it at once).
  for (int prefill : {5, 12}) {
    SCOPED_TRACE("prefill " + std::to_string(prefill));
    std::vector<float> ref = teacher_forced(ogx::test::load_on(dir + "/cpu", "cpu"), prefill);
    ASSERT_EQ(ref.size(), (size_t)(kTotal - prefill + 1) * kVocab);
    for (const char* e : {"cpu", "dml"})
      for (const char* provider : {"cpu", "vulkan"}) {
        auto model = ogx::test::load_on(dir + "/" + e, provider);
        if (!model) {
          std::cout << "[ rope " << name << " ] no Vulkan device: Vulkan run skipped\n";
          continue;
        }
        double d = max_diff(teacher_forced(model, prefill), ref);
        for (auto& [k, v] : model->session().stats())  // longrope's If selects device constants: nothing falls back
          if (k == "fallback_nodes") EXPECT_EQ(v, 0) << e << " folder on " << provider;
        std::cout << "[ rope " << name << " fp32-" << e << " on " << provider << ", prompt " << prefill
                  << " ] max |logits - fp32-cpu on cpu| = " << d << "\n";
        EXPECT_LE(d, 1e-4) << e << " folder on " << provider;
      }
  }
  // Greedy tokens, equal on both providers (the longrope prompt of 5 crosses 8 while generating).
  for (const char* e : {"cpu", "dml"}) {
    std::vector<int32_t> want = greedy(ogx::test::load_on(dir + "/" + e, "cpu"), 5);
    auto vk = ogx::test::load_on(dir + "/" + e, "vulkan");
    if (vk) EXPECT_EQ(greedy(vk, 5), want) << e << " folder";
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Types, RopeVariant,
                         ::testing::Values("linear", "llama3", "yarn_llama", "yarn_qwen2", "longrope", "partial_longrope"),
                         [](const auto& i) { return std::string(i.param); });

}  // namespace
}  // namespace ogx::builder::test
