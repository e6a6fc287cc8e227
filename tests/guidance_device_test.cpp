// Structured output on the Vulkan provider: the token mask is applied by the device sampler (a packed bit mask per
// step, no logits read back), and greedy tokens equal the CPU provider's host-masked ones on the golden fp32 model
// (where device greedy equals CPU greedy). Uses the API test folder with the tiny tokenizer
// (build/api-test-models); skips without it or without a Vulkan device.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "genai/batch_step.h"
#include "genai/generator.h"
#include "vulkan_test_config.h"

namespace ogx::test {
namespace {

const std::string kDir = std::string(OGX_BINARY_DIR) + "/api-test-models/llama-fp32-cpu";

std::shared_ptr<genai::Model> load(bool vulkan) {
  genai::Config c = genai::Config::load(kDir);
  c.clear_providers();
  if (vulkan) select_vulkan(c, /*validation=*/true);
  return genai::Model::load(c);
}

std::vector<int32_t> generate(const std::shared_ptr<genai::Model>& m, const std::string& schema, bool* on_device,
                              const char* kind = "json_schema", int min_new = 0, int64_t* host_picks = nullptr) {
  genai::GeneratorParams p(*m);
  p.search.max_length = 4 + 120;
  if (min_new) p.search.max_length = 4 + min_new + 8, p.search.min_length = 4 + min_new;
  p.set_guidance(kind, schema);
  genai::Generator g(m, p);
  *on_device = g.samples_on_device();
  g.append_tokens({1, 300, 25, 911});
  while (!g.is_done()) g.generate_next_token();
  if (host_picks) *host_picks = g.host_picks();
  std::vector<int32_t> out(g.sequence().begin() + 4, g.sequence().end());
  if (g.last_token() == 2) out.push_back(2);  // the EOS that ended it: the last pick, not appended (as upstream)
  return out;
}

// The API test folder on the Vulkan provider (`gpu`); skips without the folder or a device.
class GuidanceDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kDir + "/genai_config.json")) GTEST_SKIP() << kDir << " is absent (../shared missing)";
    try {
      gpu = load(true);
    } catch (const std::exception& e) {
      if (no_vulkan_device(e)) GTEST_SKIP() << e.what();
      throw;
    }
  }
  std::shared_ptr<genai::Model> gpu;
};

TEST_F(GuidanceDevice, vulkan_DeviceMaskGreedyEqualsHostMask) {
  auto cpu = load(false);
  const char* schemas[] = {
      R"({"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":99},"b":{"type":"boolean"}},"required":["n","b"],"additionalProperties":false,"x-guidance":{"whitespace_flexible":false}})",
      R"({"type":"array","items":{"enum":["red","green","blue"]},"minItems":1,"maxItems":3,"x-guidance":{"whitespace_pattern":"[ ]?"}})",
      R"({"type":"object","properties":{"d":{"type":"string","format":"date"},"s":{"type":"string","maxLength":5}},"required":["d","s"],"additionalProperties":false,"x-guidance":{"whitespace_flexible":false}})",
  };
  for (const char* s : schemas) {
    bool cpu_device = true, gpu_device = false;
    std::vector<int32_t> want = generate(cpu, s, &cpu_device), got = generate(gpu, s, &gpu_device);
    EXPECT_FALSE(cpu_device);
    EXPECT_TRUE(gpu_device) << "guidance should keep device sampling on the Vulkan provider";
    EXPECT_EQ(got, want) << s;
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(want.back(), 2) << "the output should end with EOS";
  }
  // Below min_length the device mask also bans EOS (the host bans it in the logits): a regex that could end at any
  // step, 20 tokens at least.
  bool cpu_device = true, gpu_device = false;
  int64_t host_picks = -1;
  std::vector<int32_t> want = generate(cpu, "[a-z ]+", &cpu_device, "regex", 20),
                       got = generate(gpu, "[a-z ]+", &gpu_device, "regex", 20, &host_picks);
  EXPECT_EQ(got, want);
  EXPECT_LE(host_picks, 1) << "below min_length the guided steps should still pick on the device (the first token "
                               "comes from the prompt run's logits)";
  ASSERT_GE(want.size(), 20u);
  for (size_t i = 0; i < 20; i++) EXPECT_NE(want[i], 2) << "EOS before min_length at " << i;
}

// Guided generators decode together with unguided ones, greedy and seeded sampling (decode_together, as the Engine
// steps requests): one model run per step whose device picks take each guided row's mask and an all-tokens mask for
// the others, each row with its own settings, random state and logit edits (a repetition penalty under the mask);
// every generator's tokens equal its tokens alone, the penalized guided one's the CPU's.
TEST_F(GuidanceDevice, vulkan_GuidedGeneratorsDecodeTogetherWithOthers) {
  struct Req {
    const char* kind;  // null: no guidance
    const char* schema;
    std::vector<int32_t> prompt;
    bool sampled = false;  // seeded top-k sampling on the device (its own settings and random state in the run)
    double repetition_penalty = 1.0;  // logit edits on the device, under the mask
  };
  const std::vector<Req> reqs{
      {"json_schema",
       R"({"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":99},"b":{"type":"boolean"}},"required":["n","b"],"additionalProperties":false,"x-guidance":{"whitespace_flexible":false}})",
       {1, 300, 25, 911}},
      {nullptr, nullptr, {1, 45, 67}},
      {"regex", "[a-z ]+", {1, 300, 25, 911, 12}},
      {nullptr, nullptr, {1, 300, 25}},
      {"regex", "[a-z]+( [a-z]+)*", {1, 45, 67, 89}, true},
      {nullptr, nullptr, {1, 12, 13}, true},
      {"json_schema",
       R"({"type":"array","items":{"enum":["red","green","blue"]},"minItems":1,"maxItems":3,"x-guidance":{"whitespace_pattern":"[ ]?"}})",
       {1, 300, 25, 911, 7}, false, 1.3},
  };
  auto make_on = [&](const std::shared_ptr<genai::Model>& m, const Req& r) {
    genai::GeneratorParams p(*m);
    p.search.max_length = (int)r.prompt.size() + 24;
    if (r.kind) p.set_guidance(r.kind, r.schema);
    if (r.sampled) {
      p.search.do_sample = true;
      p.search.top_k = 5;
      p.search.temperature = 0.8;
      p.search.random_seed = 1234 + (int)r.prompt.size();
    }
    p.search.repetition_penalty = r.repetition_penalty;
    auto g = std::make_unique<genai::Generator>(m, p);
    g->append_tokens(r.prompt);
    return g;
  };
  auto make = [&](const Req& r) { return make_on(gpu, r); };
  std::vector<std::vector<int32_t>> want;
  for (const Req& r : reqs) {
    auto g = make(r);
    while (!g->is_done()) g->generate_next_token();
    want.push_back(g->sequence());
  }
  std::vector<std::unique_ptr<genai::Generator>> gens;
  std::vector<genai::Generator*> ptrs;
  for (const Req& r : reqs) {
    gens.push_back(make(r));
    ptrs.push_back(gens.back().get());
  }
  double runs0 = -1;
  for (auto& [k, v] : gpu->session().stats())
    if (k == "runs") runs0 = v;
  int steps = 0;
  for (bool any = true; any; steps++) {
    genai::decode_together(ptrs);
    any = false;
    for (auto* g : ptrs) any = any || !g->is_done();
  }
  for (size_t i = 0; i < gens.size(); i++) EXPECT_EQ(gens[i]->sequence(), want[i]) << "generator " << i;
  // The penalized guided request picks on the device (edits read through the mask) and gives the CPU's tokens.
  auto cpu = load(false);
  auto alone_cpu = make_on(cpu, reqs.back());
  while (!alone_cpu->is_done()) alone_cpu->generate_next_token();
  EXPECT_EQ(want.back(), alone_cpu->sequence()) << "penalized guided generator, Vulkan against CPU";
  EXPECT_TRUE(make(reqs.back())->samples_on_device());
  double runs1 = -1;
  for (auto& [k, v] : gpu->session().stats())
    if (k == "runs") runs1 = v;
  EXPECT_LE(runs1 - runs0, steps) << "one model run per step (" << steps << " steps)";
}

}  // namespace
}  // namespace ogx::test
