// The real device list, its JSON, the CLI, tuning and disable_metacommands on the test device.
#include <nlohmann/json.hpp>

#include "providers/vulkan/cli.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

TEST(VulkanDevices, ListOrNoDeviceError) {
  try {
    auto devices = list_devices();
    ASSERT_FALSE(devices.empty());
    for (auto& d : devices) {
      EXPECT_FALSE(d.name.empty());
      EXPECT_GE(d.api_version, (uint32_t)VK_API_VERSION_1_0);
      EXPECT_FALSE(d.heaps.empty());
      EXPECT_GT(d.subgroup_size, 0u);
    }
    auto j = nlohmann::json::parse(devices_to_json(devices, devices[0].index));
    ASSERT_EQ(j["devices"].size(), devices.size());
    EXPECT_TRUE(j["devices"][0]["selected"].get<bool>());
    EXPECT_TRUE(j["devices"][0].contains("memory_heaps"));
    EXPECT_TRUE(j["devices"][0]["features"].contains("cooperative_matrix"));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no Vulkan device found"), std::string::npos) << e.what();
    GTEST_SKIP() << e.what();
  }
}

TEST(VulkanDevices, CliRuns) {
  testing::internal::CaptureStdout();
  int rc = cmd_devices({"--json"});
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_TRUE(nlohmann::json::accept(out)) << out;  // JSON also without a device (then with "error")
  if (rc != 0) GTEST_SKIP() << "no Vulkan device";
  EXPECT_EQ(cmd_devices({"--bogus"}), 2);
}

class VulkanContextTest : public VulkanTest {};

TEST_F(VulkanContextTest, TuningRowsAndPortableMode) {
  Tuning tuned = tuning_for(ctx().info(), false);
  Tuning portable = tuning_for(ctx().info(), true);
  EXPECT_EQ(portable.row, "generic");
  EXPECT_FALSE(portable.vendor_tuned);
  if (ctx().info().type == DeviceType::cpu) {
    EXPECT_EQ(tuned.row, "cpu-driver");
  }
  EXPECT_LE(tuned.matvec_threads, ctx().info().max_workgroup_invocations);
}

// The matrix-unit kernels follow the device's features and go with disable_metacommands (portable kernels only).
TEST_F(VulkanContextTest, CooperativeMatrixFollowsFeaturesAndDisableMetacommands) {
  const DeviceFeatures& f = ctx().info().features;
  EXPECT_EQ(ctx().coopmat_f16(), f.coopmat_f16_nv && f.vulkan_memory_model && f.fp16_arithmetic &&
                                     ctx().info().min_subgroup_size == 32 && ctx().info().max_subgroup_size == 32 &&
                                     !ctx().options().disable_metacommands);
  if (f.coopmat_f16_nv) EXPECT_TRUE(f.cooperative_matrix);
  ContextOptions o;
  o.provider = ctx().options();
  o.provider.disable_metacommands = true;
  Context portable(o);
  EXPECT_EQ(portable.info().index, ctx().info().index);
  EXPECT_FALSE(portable.coopmat_f16());
  EXPECT_EQ(portable.tuning().row, "generic");
}

TEST_F(VulkanContextTest, ValidationMessengerIsLive) {
  // A buffer with no usage flags violates VUID-VkBufferCreateInfo-usage-requiredbitmask: the messenger must see it.
  int before = Instance::validation_message_count();
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = 64;
  info.usage = 0;
  VkBuffer buffer = VK_NULL_HANDLE;
  vkCreateBuffer(ctx().device(), &info, nullptr, &buffer);
  if (buffer) vkDestroyBuffer(ctx().device(), buffer, nullptr);
  int seen = Instance::validation_message_count() - before;
  EXPECT_GE(seen, 1) << "the validation layer is not active";
  expect_validation_messages(seen);
}

// enable_pipeline_statistics: where the device offers VK_KHR_pipeline_executable_properties each pipeline built
// carries the driver's numeric statistics; elsewhere the context still works and the lists stay empty.
TEST_F(VulkanContextTest, PipelineStatisticsWhereTheDriverOffersThem) {
  ContextOptions o;
  o.provider = parse_provider_options({{"enable_pipeline_statistics", "1"}});
  o.provider.device_index = ctx().info().index;
  o.provider.hardware_type = ctx().options().hardware_type;
  Context c(o);
  const Pipeline& p = c.pipelines().get("rms_norm_f32");
  if (c.info().features.pipeline_statistics) {
    ASSERT_FALSE(p.statistics.empty()) << c.info().name << " offers statistics but reported none";
    for (auto& st : p.statistics) EXPECT_FALSE(st.name.empty());
  } else {
    EXPECT_TRUE(p.statistics.empty());
  }
  EXPECT_TRUE(ctx().pipelines().get("rms_norm_f32").statistics.empty());  // not asked for: none
  EXPECT_THROW(parse_provider_options({{"enable_pipeline_statistics", "maybe"}}), Error);
}

// The cooperative-matrix shaders (names with "_coop") need VK_NV_cooperative_matrix: built only where the context
// enabled it (kernels never pick them elsewhere).
TEST_F(VulkanContextTest, EveryShaderBuilds) {
  int skipped = 0;
  for (const auto& name : shader_names()) {
    if (name.find("_coop") != std::string::npos && !ctx().coopmat_f16()) {
      skipped++;
      continue;
    }
    EXPECT_NO_THROW(ctx().pipelines().get(name)) << name;
  }
  if (skipped) std::printf("[ shaders ] %d cooperative-matrix shaders not built: the device lacks the feature\n", skipped);
}

}  // namespace
}  // namespace ogx::vk::test
