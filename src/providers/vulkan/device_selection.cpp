#include "providers/vulkan/device_selection.h"

#include <cstdlib>

#include <algorithm>
#include <sstream>

#include "common/error.h"
#include "common/log.h"

namespace ogx::vk {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = (char)std::tolower((unsigned char)c);
  return s;
}

int64_t parse_int(const std::string& key, const std::string& value, int64_t lo, int64_t hi) {
  try {
    size_t used = 0;
    long long v = std::stoll(value, &used, 0);  // decimal or 0x hex
    if (used == value.size() && v >= lo && v <= hi) return v;
  } catch (...) {
  }
  throw_error("invalid value '", value, "' for provider option ", key, " (expected an integer in [", lo, ", ", hi, "])");
}

bool parse_bool(const std::string& key, const std::string& value) {
  std::string v = lower(value);
  if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "off" || v == "no") return false;
  throw_error("invalid value '", value, "' for provider option ", key, " (expected true/false or 1/0)");
}

PerformancePreference parse_preference(const std::string& value) {
  std::string v = lower(value);
  if (v == "default") return PerformancePreference::default_order;
  if (v == "high_performance") return PerformancePreference::high_performance;
  if (v == "low_power" || v == "minimum_power") return PerformancePreference::low_power;
  throw_error("invalid value '", value,
              "' for provider option performance_preference (expected default, high_performance, low_power or "
              "minimum_power)");
}

HardwareType parse_hardware_type(const std::string& value) {
  std::string v = lower(value);
  if (v == "gpu") return HardwareType::gpu;
  if (v == "cpu") return HardwareType::cpu;
  if (v == "npu")
    throw_error("provider option hardware_device_type=npu is not supported by the Vulkan provider (NPUs have no "
                "Vulkan compute driver); use gpu or cpu");
  throw_error("invalid value '", value, "' for provider option hardware_device_type (expected gpu, cpu or npu)");
}

// Rank of a device type: lower sorts first.
int type_rank(DeviceType t, PerformancePreference p) {
  bool low = p == PerformancePreference::low_power;
  switch (t) {
    case DeviceType::discrete: return low ? 1 : 0;
    case DeviceType::integrated: return low ? 0 : 1;
    case DeviceType::virtual_gpu: return 2;
    case DeviceType::cpu: return 3;
    default: return 4;
  }
}

bool passes_filters(const DeviceInfo& d, const ProviderOptions& o) {
  if (!d.usable()) return false;
  bool is_cpu = d.type == DeviceType::cpu;
  if (o.hardware_type == HardwareType::gpu && is_cpu) return false;
  if (o.hardware_type == HardwareType::cpu && !is_cpu) return false;
  if (o.hardware_device_id && d.device_id != *o.hardware_device_id) return false;
  if (o.hardware_vendor_id && d.vendor_id != *o.hardware_vendor_id) return false;
  return true;
}

}  // namespace

ProviderOptions parse_provider_options(const std::map<std::string, std::string>& options) {
  ProviderOptions o;
  for (const auto& [key, value] : options) {
    if (key == "device_id" || key == "device_index") {
      o.device_index = (int)parse_int(key, value, 0, 1 << 20);
    } else if (key == "performance_preference") {
      o.preference = parse_preference(value);
    } else if (key == "hardware_device_type") {
      o.hardware_type = parse_hardware_type(value);
    } else if (key == "hardware_device_id") {
      o.hardware_device_id = (uint32_t)parse_int(key, value, 0, 0xffffffffll);
    } else if (key == "hardware_vendor_id") {
      o.hardware_vendor_id = (uint32_t)parse_int(key, value, 0, 0xffffffffll);
    } else if (key == "disable_metacommands") {
      o.disable_metacommands = parse_bool(key, value);
    } else if (key == "enable_pipeline_statistics") {
      o.pipeline_statistics = parse_bool(key, value);
    } else if (key == "enable_graph_capture") {
      o.enable_graph_capture = parse_bool(key, value);
    } else if (key == "tuning") {
      o.tuning_overrides = value;
    } else if (key == "device_memory_budget_mb") {
      char* end = nullptr;
      const double mb = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != 0 || !(mb > 0) || mb > (double)(1ll << 40))
        throw_error("invalid value '", value, "' for provider option device_memory_budget_mb (expected MiB > 0)");
      o.device_memory_budget_mb = mb;
    } else {
      log_warning("unknown provider option '" + key + "' for the vulkan (dml) provider is ignored");
    }
  }
  return o;
}

std::vector<int> ordered_candidates(const std::vector<DeviceInfo>& devices, const ProviderOptions& options) {
  std::vector<int> out;
  for (size_t i = 0; i < devices.size(); i++)
    if (passes_filters(devices[i], options)) out.push_back((int)i);
  PerformancePreference pref = options.preference;
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
    const DeviceInfo& da = devices[a];
    const DeviceInfo& db = devices[b];
    int ra = type_rank(da.type, pref), rb = type_rank(db.type, pref);
    if (ra != rb) return ra < rb;
    if (pref == PerformancePreference::low_power) return false;  // keep enumeration order within a type
    return da.device_local_bytes() > db.device_local_bytes();     // larger memory first
  });
  return out;
}

std::string describe_devices(const std::vector<DeviceInfo>& devices) {
  std::ostringstream os;
  if (devices.empty()) os << "  (none)\n";
  for (auto& d : devices) {
    os << "  [" << d.index << "] " << d.name << " (" << device_type_name(d.type) << ", vendor_id " << d.vendor_id
       << ", device_id " << d.device_id << ", driver " << d.driver_name << ", API "
       << api_version_string(d.api_version) << (d.usable() ? "" : ", unusable: needs Vulkan 1.2 with buffer device "
                                                                   "address, timeline semaphores, subgroup arithmetic")
       << ")\n";
  }
  return os.str();
}

int select_device(const std::vector<DeviceInfo>& devices, const ProviderOptions& options) {
  auto candidates = ordered_candidates(devices, options);
  if (candidates.empty()) {
    std::string hint = options.hardware_type == HardwareType::gpu
                           ? " (CPU Vulkan drivers such as lavapipe are used only with hardware_device_type=cpu)"
                           : "";
    throw_error("no Vulkan device matches the provider options", hint, "; devices seen:\n",
                describe_devices(devices));
  }
  int pick = options.device_index.value_or(0);
  if (pick >= (int)candidates.size())
    throw_error("provider option device_id=", pick, " is out of range: ", candidates.size(),
                " matching device(s); devices seen:\n", describe_devices(devices));
  return candidates[pick];
}

}  // namespace ogx::vk
