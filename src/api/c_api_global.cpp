// C API: version, provider availability, device listing, and the process-wide switches of ort_genai_c.h
// (telemetry, current GPU, execution provider libraries).
#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>

#include "api/handles.h"
#include "common/log.h"

#ifdef OGX_HAVE_VULKAN
#include "providers/vulkan/device_selection.h"
#endif

#ifndef OGX_VERSION
#define OGX_VERSION "0.0.0"
#endif

using namespace ogx::api;

namespace {

std::string devices_json() {
#ifdef OGX_HAVE_VULKAN
  try {
    auto devices = ogx::vk::list_devices();
    int selected = -1;
    try {
      selected = devices[ogx::vk::select_device(devices, ogx::vk::ProviderOptions{})].index;
    } catch (const ogx::Error&) {
      // No device passes the default filters (e.g. only a CPU driver): nothing is selected by default.
    }
    return ogx::vk::devices_to_json(devices, selected);
  } catch (const ogx::Error& e) {
    return nlohmann::ordered_json({{"devices", nlohmann::json::array()}, {"error", e.what()}}).dump(2);
  }
#else
  return nlohmann::ordered_json({{"devices", nlohmann::json::array()},
                                 {"error", "this build of ogx has no Vulkan provider (OGX_WITH_VULKAN=OFF)"}})
      .dump(2);
#endif
}

}  // namespace

namespace ogx::api {

std::atomic<int>& current_gpu_device_id() {
  static std::atomic<int> id{0};
  return id;
}

std::string execution_provider_library_error(const char* name, const char* path) {
  std::string what = std::string("execution provider library '") + (name ? name : "(null)") + "'";
  if (path) what += std::string(" (") + path + ")";
  return what + " cannot be " + (path ? "registered" : "unregistered") +
         ": ogx does not run on ONNX Runtime and loads no provider libraries; its providers are built in: cpu, "
         "vulkan (alias dml)";
}

}  // namespace ogx::api

extern "C" {

const char* OgxGetVersion(void) { return OGX_VERSION; }

OgxResult* OgxIsProviderAvailable(const char* provider, bool* out) {
  return guard([&] {
    need(provider, "OgxIsProviderAvailable", "provider");
    need(out, "OgxIsProviderAvailable", "out");
    std::string canonical;
    try {
      canonical = ogx::genai::canonical_provider(provider);
    } catch (const ogx::Error& e) {
      fail(OgxErrorCode_InvalidArgument, e.what());
    }
    auto avail = ogx::genai::available_providers();
    *out = std::find(avail.begin(), avail.end(), canonical) != avail.end();
  });
}

void OgxSetTelemetryEnabled(bool) {}  // ogx sends no telemetry

void OgxShutdown(void) {}

OgxResult* OgxSetCurrentGpuDeviceId(int device_id) {
  return guard([&] {
    if (device_id < 0)
      fail(OgxErrorCode_InvalidArgument, "OgxSetCurrentGpuDeviceId: device_id " + std::to_string(device_id) +
                                             " is negative");
    current_gpu_device_id().store(device_id);
  });
}

OgxResult* OgxGetCurrentGpuDeviceId(int* device_id) {
  return guard([&] {
    need(device_id, "OgxGetCurrentGpuDeviceId", "device_id");
    *device_id = current_gpu_device_id().load();
  });
}

void OgxRegisterExecutionProviderLibrary(const char* registration_name, const char* library_path) {
  ogx::log(ogx::LogLevel::error, execution_provider_library_error(registration_name, library_path));
}

void OgxUnregisterExecutionProviderLibrary(const char* registration_name) {
  ogx::log(ogx::LogLevel::error, execution_provider_library_error(registration_name, nullptr));
}

OgxResult* OgxGetAvailableDevices(const char** out) {
  return guard([&] {
    need(out, "OgxGetAvailableDevices", "out");
    *out = owned_string(devices_json());
  });
}

}  // extern "C"
