// The process's Vulkan instance (API 1.2+), created on first use. Validation (Khronos layer, core + synchronization
// checks) is requested by tests through InstanceOptions; every validation message is counted and logged so a test
// can fail on it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "providers/vulkan/vk_api.h"

namespace ogx::vk {

struct InstanceOptions {
  bool validation = false;  // VK_LAYER_KHRONOS_validation with synchronization validation; error if the layer is absent
};

class Instance {
 public:
  // The shared instance for these options (one per distinct option set per process). Throws ogx::Error
  // "no Vulkan device found" (with an install hint) when the loader or a 1.2 driver is missing.
  static std::shared_ptr<Instance> get(const InstanceOptions& options = {});
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validation() const { return options_.validation; }
  std::vector<VkPhysicalDevice> physical_devices() const;

  // Validation messages (warnings and errors) seen since the process started, and the last few texts.
  static int validation_message_count();
  static std::vector<std::string> validation_messages();

 private:
  explicit Instance(const InstanceOptions& options);
  InstanceOptions options_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
};

// The error every entry point raises when nothing usable is present.
[[noreturn]] void throw_no_device(const std::string& detail);

}  // namespace ogx::vk
