// C API: version, logging, provider availability and device listing.
#include <algorithm>
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

extern "C" {

const char* OgxGetVersion(void) { return OGX_VERSION; }

OgxResult* OgxSetLogCallback(OgxLogCallback callback, void* user_data) {
  return guard([&] {
    if (!callback) {
      ogx::set_log_sink(nullptr);
      return;
    }
    ogx::set_log_sink([callback, user_data](ogx::LogLevel level, const std::string& msg) {
      callback(user_data, static_cast<OgxLogLevel>(static_cast<int>(level)), msg.c_str());
    });
  });
}

OgxResult* OgxSetLogLevel(OgxLogLevel level) {
  return guard([&] {
    int l = enum_bits(level);
    if (l < OgxLogLevel_Info || l > OgxLogLevel_Error)
      fail(OgxErrorCode_InvalidArgument, "OgxSetLogLevel: level " + std::to_string(l) +
                                             " is not one of OgxLogLevel_Info (0), _Warning (1), _Error (2)");
    ogx::set_log_level(static_cast<ogx::LogLevel>(l));
  });
}

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

OgxResult* OgxGetAvailableDevices(const char** out) {
  return guard([&] {
    need(out, "OgxGetAvailableDevices", "out");
    *out = owned_string(devices_json());
  });
}

}  // extern "C"
