// --random-weights: models of every supported architecture build from a config alone, have the config's
// shape, pass ONNX's checker (when the Python module is present), and are deterministic.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "builder/builder.h"
#include "builder/cli.h"
#include "test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ogx::builder::test {
namespace {

json tiny_config(const std::string& arch) {
  json c = {{"architectures", {arch}}, {"hidden_size", 64},       {"intermediate_size", 96},
            {"num_hidden_layers", 2},  {"num_attention_heads", 4}, {"num_key_value_heads", 2},
            {"vocab_size", 256},       {"max_position_embeddings", 128}, {"rms_norm_eps", 1e-6},
            {"bos_token_id", 1},       {"eos_token_id", 2},        {"hidden_act", "silu"}};
  if (arch == "Qwen3ForCausalLM") c["head_dim"] = 32;
  if (arch == "MistralForCausalLM") c["sliding_window"] = 64;
  if (arch == "Gemma2ForCausalLM") {
    c["hidden_activation"] = "gelu_pytorch_tanh";
    c["attn_logit_softcapping"] = 50.0;
    c["final_logit_softcapping"] = 30.0;
    c["query_pre_attn_scalar"] = 16;
    c["sliding_window"] = 64;
    c["head_dim"] = 16;
  }
  if (arch == "LlamaForCausalLM")
    c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 32.0}, {"low_freq_factor", 1.0},
                         {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 64}};
  if (arch == "Qwen2ForCausalLM") c["tie_word_embeddings"] = true;
  return c;
}

bool have_python_onnx() { return std::system("/usr/bin/python3 -c 'import onnx' >/dev/null 2>&1") == 0; }

// Runs ONNX's checker through tests/check_model.py (see there for the two documented adjustments).
int run_checker(const std::string& model_path) {
  std::string cmd = std::string("/usr/bin/python3 ") + OGX_BUILDER_TEST_DIR + "/check_model.py '" + model_path + "'";
  return std::system(cmd.c_str());
}

struct Case {
  const char* arch;
  Precision p;
  Provider e;
};

class RandomBuild : public ::testing::TestWithParam<Case> {};

TEST_P(RandomBuild, BuildsAndPassesChecker) {
  const Case c = GetParam();
  std::string dir = temp_dir(std::string("rand_") + c.arch + precision_name(c.p) + provider_name(c.e));
  std::ofstream(dir + "/shape.json") << tiny_config(c.arch).dump();
  BuildOptions o;
  o.config_path = dir + "/shape.json";
  o.precision = c.p;
  o.provider = c.e;
  o.symmetric = c.p != Precision::int4 || c.e != Provider::dml;  // exercise zero points too
  BuiltModel m = build_model(o);
  write_model_folder(m, dir + "/out");
  EXPECT_EQ(m.model.graph().output(0).name(), "logits");
  EXPECT_EQ(m.genai_config["search"]["max_length"], 128);
  EXPECT_GT(m.weights.size(), 0u);
  // Deterministic: same seed, same bytes.
  BuiltModel m2 = build_model(o);
  ASSERT_EQ(m.weights.size(), m2.weights.size());
  EXPECT_EQ(0, std::memcmp(m.weights.data(), m2.weights.data(), m.weights.size()));
  if (have_python_onnx()) {
    EXPECT_EQ(run_checker(dir + "/out/model.onnx"), 0);
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Archs, RandomBuild,
    ::testing::Values(Case{"LlamaForCausalLM", Precision::fp16, Provider::dml}, Case{"LlamaForCausalLM", Precision::int4, Provider::cpu},
                      Case{"MistralForCausalLM", Precision::fp32, Provider::cpu}, Case{"Qwen2ForCausalLM", Precision::int4, Provider::dml},
                      Case{"Qwen2ForCausalLM", Precision::fp32, Provider::cpu}, Case{"Qwen3ForCausalLM", Precision::fp32, Provider::cpu},
                      Case{"Qwen3ForCausalLM", Precision::fp16, Provider::vulkan}, Case{"Phi3ForCausalLM", Precision::int4, Provider::cpu},
                      Case{"Gemma2ForCausalLM", Precision::fp32, Provider::cpu}, Case{"Gemma2ForCausalLM", Precision::int4, Provider::dml}),
    [](const auto& info) {
      return std::string(info.param.arch).substr(0, 6) + "_" + precision_name(info.param.p) + "_" +
             provider_name(info.param.e);
    });

TEST(GoldenChecker, GoldenBuildPassesOnnxChecker) {
  if (!have_goldens()) GTEST_SKIP() << "golden models not found";
  if (!have_python_onnx()) GTEST_SKIP() << "python3 onnx module not present";
  std::string dir = temp_dir("checker");
  EXPECT_EQ(cmd_build({"-i", golden_dir() + "/qwen2/hf", "-o", dir, "-p", "int4", "-e", "cpu"}), 0);
  EXPECT_EQ(run_checker(dir + "/model.onnx"), 0);
  // The same adjusted check accepts the reference export, so it judges like for like.
  EXPECT_EQ(run_checker(golden_dir() + "/qwen2/int4-cpu/model.onnx"), 0);
  fs::remove_all(dir);
}

TEST(Cli, RejectsBadOptions) {
  EXPECT_EQ(cmd_build({"-i", "x"}), 2);                            // no -o
  EXPECT_EQ(cmd_build({"-i", "x", "-o", "y", "-p", "int8"}), 2);  // unknown precision
  EXPECT_EQ(cmd_build({"--help"}), 0);
}

}  // namespace
}  // namespace ogx::builder::test
