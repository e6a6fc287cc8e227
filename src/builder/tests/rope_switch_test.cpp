// The long-RoPE switch of phi3 models (ONNX Runtime GenAI's re-prefill): when a phi3 / phimoe sequence reaches
// 4097 tokens (phi3small 8193) the generator runs the whole sequence through the model again, so that every cached
// key is rotated with the long factors the graph's If switches to past the original context — as upstream's CPU
// decoding does (StandardDecodingStrategy::Step, SpeculativeDecodingStrategy::Step). A longrope phi3 checkpoint with
// original_max_position_embeddings 4096 (data/rope/longrope.json, otherwise as small), built fp32-cpu (the If on the
// total length) and fp32-dml (one concatenated table), on the CPU and Vulkan providers:
//  - greedy decoding from a prompt of 4,094 ids to 4,101 tokens reruns 4,097 tokens once, and its tokens equal a
//    fresh generator's from the first 4,097 of them as a prompt (whose cache is the long factors' throughout, so it
//    reruns nothing);
//  - n-gram speculative decoding gives the same tokens (its verify passes stay below the switch, the round that
//    reaches it is cut there);
//  - without the rerun the cached keys of positions < 4,096 would keep the short factors: the logits at 4,097 differ
//    from the rerun's (checked, so the test would see a missing rerun).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "builder/builder.h"
#include "builder/cli.h"
#include "genai/generator.h"
#include "test_util.h"
#include "vulkan_test_config.h"

namespace fs = std::filesystem;

namespace ogx::builder::test {
namespace {

constexpr int kSwitch = 4097, kPrompt = 4094, kLength = 4101, kVocab = 256;

std::string make_folder(const std::string& dir, const char* ep) {
  if (!fs::exists(dir + "/hf")) {
    nlohmann::json c;
    std::ifstream(std::string(OGX_BUILDER_TEST_DIR) + "/data/rope/longrope.json") >> c;
    c["original_max_position_embeddings"] = 4096;
    c["max_position_embeddings"] = 4200;
    fs::create_directories(dir);
    std::ofstream(dir + "/config.json") << c.dump(1);
    write_random_checkpoint(dir + "/config.json", dir + "/hf", 7, 0.2f);
  }
  const std::string out = dir + "/" + ep;
  if (!fs::exists(out)) {
    EXPECT_EQ(cmd_build({"-i", dir + "/hf", "-o", out, "-p", "fp32", "-e", ep, "--threads", "2"}), 0);
  }
  return out;
}

std::vector<int32_t> prompt_ids(int n) {
  std::vector<int32_t> ids{1};
  for (int i = 1; i < n; i++) ids.push_back(3 + (i * 53 + 7) % (kVocab - 3));
  return ids;
}

struct GreedyRun {
  std::vector<int32_t> tokens;
  int64_t rerun = 0;
};

GreedyRun greedy(const std::shared_ptr<genai::Model>& model, const std::vector<int32_t>& prompt, bool ngram) {
  genai::GeneratorParams params(*model);
  params.search.max_length = kLength;
  params.search.min_length = kLength;  // EOS suppressed
  if (ngram) {
    params.speculative.ngram_size = 3;
    params.speculative.max_draft_tokens = 4;
  }
  genai::Generator gen(model, params);
  gen.append_tokens(prompt);
  while (!gen.is_done()) gen.generate_next_token();
  return {gen.sequence(0), gen.rerun_tokens()};
}

TEST(RopeSwitch, Phi3SequenceRunsAgainAtTheLongRopeSwitch) {
  const std::string dir = temp_dir("rope_switch");
  // The CPU folder (the If) on the CPU (2 s), the DML folder (one table) on Vulkan: on a GPU, or on lavapipe with
  // OGX_TEST_SLOW=1 (its 4,097-token prompts take ~2 minutes there; the switch itself is the generator's, tested on
  // the CPU).
  const char* dev = std::getenv("OGX_TEST_VULKAN_DEVICE");
  const char* slow = std::getenv("OGX_TEST_SLOW");
  const bool vulkan_leg = (dev && std::string(dev) != "cpu") || (slow && std::string(slow) == "1");
  for (auto [ep, provider] : {std::pair<const char*, const char*>{"cpu", "cpu"}, {"dml", "vulkan"}}) {
    const std::string folder = make_folder(dir, ep);
    if (std::string(provider) == "vulkan" && !vulkan_leg) {
      std::cout << "[ rope switch ] Vulkan leg on lavapipe skipped (OGX_TEST_SLOW=1 runs it)\n";
      continue;
    }
    {
      SCOPED_TRACE(std::string("fp32-") + ep + " on " + provider);
      auto model = ogx::test::load_on(folder, provider);
      if (!model) {
        std::cout << "[ rope switch ] no Vulkan device: Vulkan run skipped\n";
        continue;
      }
      ASSERT_EQ(model->config().model.type, "phi3");
      const GreedyRun plain = greedy(model, prompt_ids(kPrompt), false);
      ASSERT_EQ(plain.tokens.size(), (size_t)kLength);
      EXPECT_EQ(plain.rerun, kSwitch);  // once, the whole sequence at the switch
      // A fresh generator from the first 4,097 tokens: its cache is the long factors' from the start.
      const GreedyRun fresh = greedy(model, std::vector<int32_t>(plain.tokens.begin(), plain.tokens.begin() + kSwitch), false);
      EXPECT_EQ(fresh.rerun, 0);  // its cache never held short-factor keys
      EXPECT_EQ(fresh.tokens, plain.tokens);
      const GreedyRun spec = greedy(model, prompt_ids(kPrompt), true);
      EXPECT_EQ(spec.tokens, plain.tokens) << "n-gram speculative decoding";
      // The rerun matters: the cache built step by step (short factors below 4,096) gives other logits at 4,097.
      genai::GeneratorParams params(*model);
      params.search.max_length = kLength;
      genai::Generator a(model, params), b(model, params);
      std::vector<int32_t> first(plain.tokens.begin(), plain.tokens.begin() + kSwitch);
      a.append_tokens(std::vector<int32_t>(first.begin(), first.end() - 1));
      a.append_tokens({first.back()});  // one step past the switch on a short-factor cache
      b.append_tokens(first);
      double d = 0;
      for (size_t i = 0; i < a.logits().size(); i++) d = std::max(d, (double)std::fabs(a.logits()[i] - b.logits()[i]));
      std::cout << "[ rope switch fp32-" << ep << " on " << provider << " ] max |logits| difference without the "
                << "rerun: " << d << "\n";
      EXPECT_GT(d, 1e-3);
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ogx::builder::test
