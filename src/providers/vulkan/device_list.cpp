#include "providers/vulkan/device_list.h"

#include <cstring>
#include <nlohmann/json.hpp>

namespace ogx::vk {

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::discrete: return "discrete";
    case DeviceType::integrated: return "integrated";
    case DeviceType::virtual_gpu: return "virtual";
    case DeviceType::cpu: return "cpu";
    default: return "other";
  }
}

uint64_t DeviceInfo::device_local_bytes() const {
  uint64_t total = 0;
  for (auto& h : heaps)
    if (h.device_local) total += h.size;
  return total;
}

bool DeviceInfo::usable() const {
  return api_version >= VK_API_VERSION_1_2 && features.buffer_device_address && features.timeline_semaphore &&
         features.subgroup_arithmetic;
}

namespace {

std::vector<std::string> device_extensions(VkPhysicalDevice device) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(device, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(device, nullptr, &n, exts.data());
  std::vector<std::string> names;
  for (auto& e : exts) names.push_back(e.extensionName);
  return names;
}

bool contains(const std::vector<std::string>& v, const char* s) {
  for (auto& x : v)
    if (x == s) return true;
  return false;
}

DeviceType to_type(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return DeviceType::discrete;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return DeviceType::integrated;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return DeviceType::virtual_gpu;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return DeviceType::cpu;
    default: return DeviceType::other;
  }
}

void read_memory(VkPhysicalDevice device, DeviceInfo& info) {
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mem{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  if (info.features.memory_budget) mem.pNext = &budget;
  vkGetPhysicalDeviceMemoryProperties2(device, &mem);
  for (uint32_t i = 0; i < mem.memoryProperties.memoryHeapCount; i++) {
    MemoryHeap h;
    h.size = mem.memoryProperties.memoryHeaps[i].size;
    h.device_local = mem.memoryProperties.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
    h.budget = info.features.memory_budget ? budget.heapBudget[i] : h.size;
    h.usage = info.features.memory_budget ? budget.heapUsage[i] : 0;
    info.heaps.push_back(h);
  }
}

// The one cooperative-matrix shape ogx's matmul_coop.comp uses: 16x16x16, fp16 A/B, fp32 C/D, subgroup scope.
bool has_coopmat_f16_nv(VkPhysicalDevice device) {
  if (!vkGetPhysicalDeviceCooperativeMatrixPropertiesNV) return false;
  uint32_t n = 0;
  if (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(device, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkCooperativeMatrixPropertiesNV> props(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  if (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(device, &n, props.data()) != VK_SUCCESS) return false;
  for (auto& p : props)
    if (p.MSize == 16 && p.NSize == 16 && p.KSize == 16 && p.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
        p.BType == VK_COMPONENT_TYPE_FLOAT16_NV && p.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
        p.DType == VK_COMPONENT_TYPE_FLOAT32_NV && p.scope == VK_SCOPE_SUBGROUP_NV)
      return true;
  return false;
}

void read_features(VkPhysicalDevice device, const std::vector<std::string>& exts, DeviceInfo& info) {
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f.pNext = &f11;
  f11.pNext = &f12;
  bool has_dot = info.api_version >= VK_API_VERSION_1_3 || contains(exts, "VK_KHR_shader_integer_dot_product");
  void** tail = &f12.pNext;
  if (has_dot) *tail = &dot, tail = &dot.pNext;
  const bool has_pe = contains(exts, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  if (has_pe) *tail = &pe;
  vkGetPhysicalDeviceFeatures2(device, &f);
  info.features.pipeline_statistics = has_pe && pe.pipelineExecutableInfo;
  info.features.fp16_arithmetic = f12.shaderFloat16;
  info.features.storage_8bit = f12.storageBuffer8BitAccess;
  info.features.int64 = f.features.shaderInt64;
  info.features.storage_16bit = f11.storageBuffer16BitAccess;
  info.features.buffer_device_address = f12.bufferDeviceAddress;
  info.features.timeline_semaphore = f12.timelineSemaphore;
  info.features.integer_dot_product = has_dot && dot.shaderIntegerDotProduct;
  info.features.cooperative_matrix =
      contains(exts, "VK_KHR_cooperative_matrix") || contains(exts, "VK_NV_cooperative_matrix");
  info.features.vulkan_memory_model = f12.vulkanMemoryModel && f12.vulkanMemoryModelDeviceScope;
  info.features.coopmat_f16_nv = contains(exts, "VK_NV_cooperative_matrix") && has_coopmat_f16_nv(device);
  info.features.bf16 = contains(exts, "VK_KHR_shader_bfloat16");
  info.features.memory_budget = contains(exts, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  info.features.subgroup_size_control =
      info.api_version >= VK_API_VERSION_1_3 || contains(exts, "VK_EXT_subgroup_size_control");
}

void read_properties(VkPhysicalDevice device, DeviceInfo& info) {
  VkPhysicalDeviceProperties base;
  vkGetPhysicalDeviceProperties(device, &base);
  info.api_version = base.apiVersion;
  VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties ssc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceProperties2 p{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p.pNext = &sub;
  sub.pNext = &drv;
  if (base.apiVersion >= VK_API_VERSION_1_3) drv.pNext = &ssc;
  vkGetPhysicalDeviceProperties2(device, &p);
  const auto& pr = p.properties;
  info.name = pr.deviceName;
  info.vendor_id = pr.vendorID;
  info.device_id = pr.deviceID;
  info.type = to_type(pr.deviceType);
  info.driver_version = pr.driverVersion;
  info.driver_name = drv.driverName;
  info.driver_info = drv.driverInfo;
  info.subgroup_size = sub.subgroupSize;
  info.min_subgroup_size = ssc.minSubgroupSize ? ssc.minSubgroupSize : sub.subgroupSize;
  info.max_subgroup_size = ssc.maxSubgroupSize ? ssc.maxSubgroupSize : sub.subgroupSize;
  info.features.subgroup_arithmetic = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                                      (sub.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  info.features.subgroup_shuffle = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                                   (sub.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
  info.max_storage_buffer_range = pr.limits.maxStorageBufferRange;
  info.max_push_constants = pr.limits.maxPushConstantsSize;
  info.max_workgroup_invocations = pr.limits.maxComputeWorkGroupInvocations;
  info.max_shared_memory = pr.limits.maxComputeSharedMemorySize;
  info.timestamp_period = pr.limits.timestampComputeAndGraphics ? pr.limits.timestampPeriod : 0.0f;
}

}  // namespace

DeviceInfo describe_device(VkPhysicalDevice device, int index) {
  DeviceInfo info;
  info.index = index;
  auto exts = device_extensions(device);
  read_properties(device, info);
  read_features(device, exts, info);
  read_memory(device, info);
  return info;
}

std::vector<DeviceInfo> list_devices(const InstanceOptions& options) {
  auto instance = Instance::get(options);
  auto physical = instance->physical_devices();
  if (physical.empty()) throw_no_device("the Vulkan loader reports no physical device");
  std::vector<DeviceInfo> out;
  for (size_t i = 0; i < physical.size(); i++) out.push_back(describe_device(physical[i], (int)i));
  return out;
}

std::string api_version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

std::string driver_version_string(const DeviceInfo& d) {
  uint32_t v = d.driver_version;
  if (d.vendor_id == 4318)  // NVIDIA: 10.8.8.6 bits
    return std::to_string(v >> 22) + "." + std::to_string((v >> 14) & 0xff) + "." + std::to_string((v >> 6) & 0xff);
  return api_version_string(v);
}

std::string devices_to_json(const std::vector<DeviceInfo>& devices, int selected_index) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (auto& d : devices) {
    nlohmann::ordered_json j;
    j["index"] = d.index;
    j["name"] = d.name;
    j["vendor_id"] = d.vendor_id;
    j["device_id"] = d.device_id;
    j["type"] = device_type_name(d.type);
    j["driver_name"] = d.driver_name;
    j["driver_info"] = d.driver_info;
    j["driver_version"] = driver_version_string(d);
    j["api_version"] = api_version_string(d.api_version);
    j["subgroup_size"] = d.subgroup_size;
    j["max_storage_buffer_range"] = d.max_storage_buffer_range;
    nlohmann::ordered_json heaps = nlohmann::ordered_json::array();
    for (auto& h : d.heaps)
      heaps.push_back({{"size", h.size}, {"budget", h.budget}, {"usage", h.usage}, {"device_local", h.device_local}});
    j["memory_heaps"] = heaps;
    auto& f = d.features;
    j["features"] = {{"fp16_arithmetic", f.fp16_arithmetic}, {"storage_16bit", f.storage_16bit},
                     {"storage_8bit", f.storage_8bit}, {"int64", f.int64},
                     {"integer_dot_product", f.integer_dot_product},
                     {"cooperative_matrix", f.cooperative_matrix},
                     {"cooperative_matrix_f16_nv", f.coopmat_f16_nv}, {"bf16", f.bf16},
                     {"buffer_device_address", f.buffer_device_address}, {"timeline_semaphore", f.timeline_semaphore},
                     {"subgroup_arithmetic", f.subgroup_arithmetic}, {"subgroup_shuffle", f.subgroup_shuffle},
                     {"memory_budget", f.memory_budget}, {"pipeline_statistics", f.pipeline_statistics}};
    j["usable"] = d.usable();
    j["selected"] = d.index == selected_index;
    arr.push_back(j);
  }
  return nlohmann::ordered_json({{"devices", arr}}).dump(2);
}

}  // namespace ogx::vk
