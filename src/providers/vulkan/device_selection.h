// Provider options (the DirectML provider's keys, honoured by the Vulkan provider) and device selection.
// select_device is a pure function over a device list so it is tested with fake lists.
//
// ogx's ordered GPU list: the devices that pass the filters (hardware_device_type, hardware_device_id,
// hardware_vendor_id, and usability), ordered by performance_preference. device_id / device_index index that list.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "providers/vulkan/device_list.h"

namespace ogx::vk {

enum class PerformancePreference { default_order, high_performance, low_power };
enum class HardwareType { gpu, cpu };

struct ProviderOptions {
  std::optional<int> device_index;                             // device_id / device_index
  PerformancePreference preference = PerformancePreference::default_order;
  HardwareType hardware_type = HardwareType::gpu;              // hardware_device_type
  std::optional<uint32_t> hardware_device_id;                  // PCI device id filter
  std::optional<uint32_t> hardware_vendor_id;                  // PCI vendor id filter
  bool disable_metacommands = false;                           // portable kernels only
  bool enable_graph_capture = true;                            // record a decode step once, replay per token
  // device_memory_budget_mb: device-local memory ogx may take (MiB, fractions allowed), below what the heap has;
  // past it allocations fail as on a full device (for tests of out-of-memory, and to leave room to others).
  std::optional<double> device_memory_budget_mb;
  // tuning: "field=value,field=value" — Tuning's scalar fields set over the device's table row (tuning.h; for
  // measuring a kernel choice on one's own device; checked when the context is created).
  std::string tuning_overrides;
  // enable_pipeline_statistics: the driver's statistics of every pipeline built (registers, instructions, ...:
  // VK_KHR_pipeline_executable_properties) in the session's stats; ignored, with a warning, where the device lacks it.
  bool pipeline_statistics = false;
};

// Parses string key/values. Unknown keys: a warning (log_warning) and ignored. Invalid values: ogx::Error
// naming the option. hardware_device_type "npu": error (no Vulkan NPU support).
ProviderOptions parse_provider_options(const std::map<std::string, std::string>& options);

// Indices into `devices` of ogx's ordered GPU list for these options.
std::vector<int> ordered_candidates(const std::vector<DeviceInfo>& devices, const ProviderOptions& options);

// Position in `devices` of the device to use. Throws ogx::Error listing every device seen when none matches.
int select_device(const std::vector<DeviceInfo>& devices, const ProviderOptions& options);

std::string describe_devices(const std::vector<DeviceInfo>& devices);  // one line per device, for errors

}  // namespace ogx::vk
