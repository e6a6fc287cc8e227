// What ogx knows about each Vulkan physical device: identity, memory, subgroup size and the features its kernels use.
// DeviceInfo is plain data so device selection can be tested with fake lists.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "providers/vulkan/instance.h"

namespace ogx::vk {

enum class DeviceType { discrete, integrated, virtual_gpu, cpu, other };
const char* device_type_name(DeviceType t);  // "discrete", "integrated", "virtual", "cpu", "other"

struct MemoryHeap {
  uint64_t size = 0;         // bytes
  uint64_t budget = 0;       // bytes this process may use (VK_EXT_memory_budget), else == size
  uint64_t usage = 0;        // bytes in use by this process per VK_EXT_memory_budget, else 0
  bool device_local = false;
};

struct DeviceFeatures {
  bool fp16_arithmetic = false;      // shaderFloat16
  bool storage_16bit = false;        // storageBuffer16BitAccess
  bool storage_8bit = false;         // storageBuffer8BitAccess
  bool int64 = false;                // shaderInt64 (int64 elementwise ops)
  bool integer_dot_product = false;  // VK_KHR_shader_integer_dot_product (core 1.3)
  bool cooperative_matrix = false;   // VK_KHR_cooperative_matrix or VK_NV_cooperative_matrix
  bool coopmat_f16_nv = false;       // VK_NV_cooperative_matrix with fp16 x fp16 -> fp32 16x16x16 (subgroup scope)
  bool vulkan_memory_model = false;  // vulkanMemoryModel + ...DeviceScope (the cooperative-matrix shaders use it)
  bool bf16 = false;                 // VK_KHR_shader_bfloat16
  bool buffer_device_address = false;
  bool timeline_semaphore = false;
  bool subgroup_arithmetic = false;  // subgroupAdd/Max in compute shaders
  bool subgroup_shuffle = false;     // subgroupShuffle/ShuffleXor in compute shaders
  bool subgroup_size_control = false;
  bool memory_budget = false;        // VK_EXT_memory_budget
  bool pipeline_statistics = false;  // VK_KHR_pipeline_executable_properties (the driver's per-pipeline statistics:
                                     // registers, instructions; provider option enable_pipeline_statistics)
};

struct DeviceInfo {
  int index = 0;  // position in the Vulkan enumeration
  std::string name;
  uint32_t vendor_id = 0;  // PCI vendor id (4318 NVIDIA, 4098 AMD, 32902 Intel, 20803 Qualcomm)
  uint32_t device_id = 0;  // PCI device id
  DeviceType type = DeviceType::other;
  std::string driver_name, driver_info;
  uint32_t driver_version = 0;  // raw, vendor-encoded
  uint32_t api_version = 0;     // VK_MAKE_API_VERSION encoded
  std::vector<MemoryHeap> heaps;
  uint32_t subgroup_size = 0;
  uint32_t min_subgroup_size = 0, max_subgroup_size = 0;
  uint64_t max_storage_buffer_range = 0;  // bytes one storage-buffer binding may span
  uint32_t max_push_constants = 0;        // bytes
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_shared_memory = 0;  // bytes per workgroup
  float timestamp_period = 0;      // nanoseconds per timestamp tick (0: no compute timestamps)
  DeviceFeatures features;

  uint64_t device_local_bytes() const;  // sum of device-local heaps
  bool usable() const;                  // meets ogx's minimum (API 1.2, BDA, timeline semaphores, subgroup ops)
};

// Every physical device of the instance; throws "no Vulkan device found" when the loader, a driver or a device
// is missing.
std::vector<DeviceInfo> list_devices(const InstanceOptions& options = {});
DeviceInfo describe_device(VkPhysicalDevice device, int index);

std::string api_version_string(uint32_t v);           // "1.3.255"
std::string driver_version_string(const DeviceInfo&);  // decoded per vendor convention
std::string devices_to_json(const std::vector<DeviceInfo>& devices, int selected_index);  // selected -1: none

}  // namespace ogx::vk
