// The Vulkan provider out of device memory and after a lost device (issue 17), on lavapipe: a device-memory budget
// (provider option device_memory_budget_mb) smaller than a model fails its load with an error naming the budget and a
// tensor; a long prompt run in chunks fits the budget of one chunk (memory bounded by the run, not the sequence),
// while the same prompt in one run fails naming the budget; a device lost at a submission
// (inject_device_loss_for_tests) fails that step and every later one at once, without hanging. In each case the
// process then loads and runs a model as usual. Skips without a Vulkan device or ../shared.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "genai/generator.h"
#include "shared_dir.h"
#include "vulkan_test_config.h"
#ifdef OGX_HAVE_VULKAN
#include "providers/vulkan/context.h"
#endif

namespace ogx::test {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

std::string golden_llama(const std::string& variant) { return shared_dir() + "/golden/models/llama/" + variant; }

// The fp16 llama golden on the Vulkan provider with the given extra options (empty keys: none).
std::shared_ptr<genai::Model> load_vulkan(const std::string& key = "", const std::string& value = "",
                                          const std::string& key2 = "", const std::string& value2 = "") {
  genai::Config c = genai::Config::load(golden_llama("fp16-dml"));
  select_vulkan(c, /*validation=*/false);
  if (!key.empty()) c.set_provider_option("dml", key, value);
  if (!key2.empty()) c.set_provider_option("dml", key2, value2);
  return genai::Model::load(c);
}

// Generates n tokens after a short prompt: the model (and the process) still work.
void expect_runs(const std::shared_ptr<genai::Model>& m, int n = 4) {
  genai::GeneratorParams p(*m);
  p.search.max_length = 8 + n;
  genai::Generator g(m, p);
  g.append_tokens({1, 15, 27, 99});
  for (int i = 0; i < n; i++) g.generate_next_token();
  EXPECT_EQ(g.token_count(), 4u + n);
}

TEST(VulkanLimits, vulkan_model_larger_than_the_memory_budget_fails_then_a_model_loads) {
  OGX_REQUIRE_SHARED();
  std::string msg;
  try {
    load_vulkan("device_memory_budget_mb", "0.25");  // 256 KiB: the fp16 golden's weights are 820 KiB
    msg = "<no error>";
  } catch (const Error& e) {
    if (no_vulkan_device(e)) GTEST_SKIP() << e.what();
    msg = e.what();
  }
  EXPECT_NE(msg.find("device_memory_budget_mb=0.25"), std::string::npos) << msg;
  EXPECT_NE(msg.find("out of device memory for tensor '"), std::string::npos) << msg;
  EXPECT_NE(error_of([] { load_vulkan("device_memory_budget_mb", "-1"); }).find("device_memory_budget_mb"),
            std::string::npos);
  expect_runs(load_vulkan());  // the same process loads and runs the model without the budget
}

TEST(VulkanLimits, vulkan_step_that_cannot_get_memory_fails_then_the_model_runs_shorter) {
  OGX_REQUIRE_SHARED();
  // The smallest budget of 1..8 MiB in which a 200-token prompt runs (the device's fixed allocations differ: the
  // H200 needs more than lavapipe).
  auto ids_of = [](int n, int salt) {
    std::vector<int32_t> ids((size_t)n);
    for (size_t i = 0; i < ids.size(); i++) ids[i] = (int32_t)(3 + (salt * 200 + i) * 7 % 2000);
    return ids;
  };
  std::shared_ptr<genai::Model> m;
  std::string budget;
  for (const char* mb : {"1", "1.5", "2", "2.5", "3", "4", "6", "8"}) {
    try {
      m = load_vulkan("device_memory_budget_mb", mb);
    } catch (const Error& e) {
      if (no_vulkan_device(e)) GTEST_SKIP() << e.what();
      if (std::string(e.what()).find("out of device memory") != std::string::npos) continue;  // the weights
      throw;
    }
    genai::GeneratorParams p(*m);
    p.search.max_length = 256;
    if (error_of([&] {
          genai::Generator g(m, p);
          g.append_tokens(ids_of(200, 0));
        }) == "<no error>") {
      budget = mb;
      break;
    }
    m.reset();
  }
  ASSERT_FALSE(budget.empty()) << "a 200-token prompt did not run within 8 MiB";
  genai::GeneratorParams p(*m);
  p.search.max_length = 4096;
  m.reset();
  {
    // A 2000-token prompt in chunks of 200 (prefill_chunk_tokens): each run's activations are a chunk's and the KV
    // cache (2 KiB blocks of 16 positions, in chunks of 1024 blocks) holds the prompt: it runs within this budget.
    std::shared_ptr<genai::Model> chunked =
        load_vulkan("device_memory_budget_mb", budget, "prefill_chunk_tokens", "200");
    genai::Generator g(chunked, p);
    EXPECT_EQ(error_of([&] { g.append_tokens(ids_of(2000, 0)); }), "<no error>");
    EXPECT_EQ(g.token_count(), 2000u);
  }
  // The same prompt in one run (prefill_chunk_tokens=0): activations and the attention workspace sized by 2000
  // positions do not fit; the step fails naming a tensor and the budget.
  std::shared_ptr<genai::Model> whole = load_vulkan("device_memory_budget_mb", budget, "prefill_chunk_tokens", "0");
  std::string msg = "<no error>";
  {
    genai::Generator g(whole, p);
    msg = error_of([&] { g.append_tokens(ids_of(2000, 0)); });
  }
  EXPECT_NE(msg.find("out of device memory for tensor '"), std::string::npos) << msg;
  EXPECT_NE(msg.find("device_memory_budget_mb=" + budget), std::string::npos) << msg;
  expect_runs(whole);  // the same model still runs a short sequence within its budget
}

#ifdef OGX_HAVE_VULKAN
TEST(VulkanLimits, vulkan_lost_device_fails_the_step_and_later_ones_then_a_new_model_runs) {
  OGX_REQUIRE_SHARED();
  std::shared_ptr<genai::Model> m;
  try {
    m = load_vulkan();
  } catch (const Error& e) {
    if (no_vulkan_device(e)) GTEST_SKIP() << e.what();
    throw;
  }
  genai::GeneratorParams p(*m);
  p.search.max_length = 16;
  {
    genai::Generator g(m, p);
    vk::inject_device_loss_for_tests();
    std::string msg = error_of([&] { g.append_tokens({1, 15, 27}); });
    EXPECT_NE(msg.find("VK_ERROR_DEVICE_LOST"), std::string::npos) << msg;
  }
  {
    genai::Generator g(m, p);  // the lost model refuses at once, naming the loss
    std::string msg = error_of([&] { g.append_tokens({1, 15, 27}); });
    EXPECT_NE(msg.find("was lost earlier"), std::string::npos) << msg;
  }
  m.reset();                   // released without hanging
  expect_runs(load_vulkan());  // a new model opens the device anew
}
#endif

}  // namespace
}  // namespace ogx::test
