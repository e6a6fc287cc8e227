// Selecting the Vulkan provider in tests: through its DirectML name, on Mesa lavapipe (hardware_device_type=cpu)
// unless OGX_TEST_VULKAN_DEVICE names another device type (gpu on a machine with one), and telling the errors that
// mean "no Vulkan device here" (the test then skips) from real failures.
#pragma once
#include <cstdlib>
#include <string>

#include "genai/config.h"
#include "genai/model.h"

namespace ogx::test {

inline void select_vulkan(genai::Config& c, bool validation) {
  c.clear_providers();
  c.append_provider("dml");
  const char* dev = std::getenv("OGX_TEST_VULKAN_DEVICE");
  c.set_provider_option("dml", "hardware_device_type", dev && *dev ? dev : "cpu");
  if (validation) c.set_provider_option("dml", "enable_validation", "1");
}

inline bool no_vulkan_device(const std::exception& e) {
  std::string msg = e.what();
  return msg.find("no Vulkan device") != std::string::npos || msg.find("no vulkan (dml) provider") != std::string::npos;
}

// The folder's model on "cpu" or on Vulkan (lavapipe unless OGX_TEST_VULKAN_DEVICE says otherwise, with the
// validation layers if asked); nullptr when there is no Vulkan device.
inline std::shared_ptr<genai::Model> load_on(const std::string& dir, const std::string& provider,
                                             bool validation = false) {
  genai::Config c = genai::Config::load(dir);
  c.clear_providers();
  if (provider != "cpu") select_vulkan(c, validation);
  try {
    return genai::Model::load(c);
  } catch (const std::exception& e) {
    if (provider != "cpu" && no_vulkan_device(e)) return nullptr;
    throw;
  }
}

}  // namespace ogx::test
