#include "providers/vulkan/tuning.h"

namespace ogx::vk {

namespace {

struct Row {
  const char* name;
  uint32_t vendor_id;  // 0: any
  DeviceType type;     // DeviceType::other: any
  Tuning values;
};

// Ordered: the first matching row wins. Values are workgroup/tile shapes only; every row computes the same result.
const Row kRows[] = {
    {"nvidia", 4318, DeviceType::other, {256, 8, 64, 256, 256, 128}},
    {"amd", 4098, DeviceType::other, {256, 8, 64, 256, 256, 256}},
    {"intel", 32902, DeviceType::other, {128, 4, 32, 256, 128, 128}},
    {"qualcomm", 20803, DeviceType::other, {128, 2, 32, 128, 128, 128}},
    {"cpu-driver", 0, DeviceType::cpu, {64, 4, 32, 128, 64, 64}},
};

const Tuning kGeneric{128, 4, 32, 256, 256, 128};

}  // namespace

Tuning tuning_for(const DeviceInfo& device, bool portable_only) {
  Tuning t = kGeneric;
  t.row = "generic";
  if (portable_only) return t;
  for (const Row& r : kRows) {
    if (r.vendor_id && r.vendor_id != device.vendor_id) continue;
    if (r.type != DeviceType::other && r.type != device.type) continue;
    t = r.values;
    t.row = r.name;
    t.vendor_tuned = true;
    break;
  }
  // Never exceed the device's limits.
  while (t.matvec_threads > device.max_workgroup_invocations) t.matvec_threads /= 2;
  while (t.reduce_threads > device.max_workgroup_invocations) t.reduce_threads /= 2;
  while (t.attention_threads > device.max_workgroup_invocations) t.attention_threads /= 2;
  return t;
}

}  // namespace ogx::vk
