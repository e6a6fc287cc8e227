// Device selection over fake device lists: ordering, filters, CPU-driver exclusion, option parsing errors.
#include <gtest/gtest.h>

#include "common/error.h"
#include "providers/vulkan/device_selection.h"

namespace ogx::vk {
namespace {

DeviceInfo fake(int index, const char* name, DeviceType type, uint32_t vendor, uint32_t device, uint64_t vram) {
  DeviceInfo d;
  d.index = index;
  d.name = name;
  d.type = type;
  d.vendor_id = vendor;
  d.device_id = device;
  d.api_version = VK_API_VERSION_1_3;
  d.heaps.push_back({vram, vram, 0, true});
  d.features.buffer_device_address = d.features.timeline_semaphore = d.features.subgroup_arithmetic = true;
  return d;
}

std::vector<DeviceInfo> machine() {
  return {fake(0, "llvmpipe", DeviceType::cpu, 0x10005, 0, 8ull << 30),
          fake(1, "Intel Iris", DeviceType::integrated, 32902, 0x9a49, 4ull << 30),
          fake(2, "AMD Radeon", DeviceType::discrete, 4098, 0x73bf, 16ull << 30),
          fake(3, "NVIDIA RTX", DeviceType::discrete, 4318, 0x2684, 24ull << 30),
          fake(4, "virtio", DeviceType::virtual_gpu, 0x1af4, 1, 1ull << 30)};
}

int pick(const std::map<std::string, std::string>& opts) {
  return select_device(machine(), parse_provider_options(opts));
}

TEST(VulkanSelection, DefaultPrefersDiscreteWithMostMemory) { EXPECT_EQ(pick({}), 3); }

TEST(VulkanSelection, HighPerformanceOrder) {
  auto order = ordered_candidates(machine(), parse_provider_options({{"performance_preference", "high_performance"}}));
  EXPECT_EQ(order, (std::vector<int>{3, 2, 1, 4}));
}

TEST(VulkanSelection, LowPowerPrefersIntegrated) {
  EXPECT_EQ(pick({{"performance_preference", "low_power"}}), 1);
  EXPECT_EQ(pick({{"performance_preference", "minimum_power"}}), 1);
}

TEST(VulkanSelection, DeviceIdIndexesOrderedList) {
  EXPECT_EQ(pick({{"device_id", "0"}}), 3);
  EXPECT_EQ(pick({{"device_id", "1"}}), 2);
  EXPECT_EQ(pick({{"device_index", "2"}}), 1);
  EXPECT_THROW(pick({{"device_id", "7"}}), Error);
}

TEST(VulkanSelection, CpuDriverOnlyWhenAsked) {
  std::vector<DeviceInfo> only_cpu = {machine()[0]};
  EXPECT_THROW(select_device(only_cpu, ProviderOptions{}), Error);
  EXPECT_EQ(select_device(only_cpu, parse_provider_options({{"hardware_device_type", "cpu"}})), 0);
  EXPECT_EQ(pick({{"hardware_device_type", "cpu"}}), 0);
}

TEST(VulkanSelection, VendorAndDeviceFilters) {
  EXPECT_EQ(pick({{"hardware_vendor_id", "4098"}}), 2);
  EXPECT_EQ(pick({{"hardware_vendor_id", "0x10DE"}}), 3);
  EXPECT_EQ(pick({{"hardware_device_id", "0x9a49"}}), 1);
  EXPECT_EQ(pick({{"hardware_vendor_id", "4318"}, {"hardware_device_id", "9860"}}), 3);
}

TEST(VulkanSelection, NoMatchListsDevicesSeen) {
  try {
    pick({{"hardware_vendor_id", "20803"}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("NVIDIA RTX"), std::string::npos) << msg;
    EXPECT_NE(msg.find("llvmpipe"), std::string::npos) << msg;
    EXPECT_NE(msg.find("vendor_id 4318"), std::string::npos) << msg;
  }
}

TEST(VulkanSelection, UnusableDevicesAreSkipped) {
  auto list = machine();
  list[3].features.buffer_device_address = false;
  EXPECT_EQ(select_device(list, ProviderOptions{}), 2);
}

TEST(VulkanSelection, InvalidValuesNameTheOption) {
  auto expect_error = [](const char* key, const char* value) {
    try {
      parse_provider_options({{key, value}});
      FAIL() << key << "=" << value << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  expect_error("device_id", "abc");
  expect_error("device_id", "-1");
  expect_error("performance_preference", "fastest");
  expect_error("hardware_device_type", "tpu");
  expect_error("hardware_device_type", "npu");
  expect_error("hardware_vendor_id", "x");
  expect_error("disable_metacommands", "maybe");
  expect_error("enable_graph_capture", "2");
}

TEST(VulkanSelection, FlagsParse) {
  auto o = parse_provider_options({{"disable_metacommands", "true"}, {"enable_graph_capture", "0"}});
  EXPECT_TRUE(o.disable_metacommands);
  EXPECT_FALSE(o.enable_graph_capture);
  auto d = parse_provider_options({});
  EXPECT_FALSE(d.disable_metacommands);
  EXPECT_TRUE(d.enable_graph_capture);
}

TEST(VulkanSelection, UnknownOptionWarnsOnly) {
  EXPECT_NO_THROW(parse_provider_options({{"some_future_option", "1"}}));
}

}  // namespace
}  // namespace ogx::vk
