#include "providers/vulkan/instance.h"

#include <cstring>
#include <map>
#include <mutex>

#include "common/log.h"

namespace ogx::vk {

namespace {

std::mutex g_messages_mutex;
int g_message_count = 0;
std::vector<std::string> g_messages;  // the last 32 texts

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return VK_FALSE;
  std::string text = data && data->pMessage ? data->pMessage : "(no text)";
  {
    std::lock_guard<std::mutex> lock(g_messages_mutex);
    g_message_count++;
    g_messages.push_back(text);
    if (g_messages.size() > 32) g_messages.erase(g_messages.begin());
  }
  log_warning("vulkan validation: " + text);
  return VK_FALSE;
}

bool has_layer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info() {
  VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = on_validation_message;
  return info;
}

}  // namespace

[[noreturn]] void throw_no_device(const std::string& detail) {
  throw_error("no Vulkan device found: ", detail,
              ". Install a Vulkan driver for your GPU (Linux: mesa-vulkan-drivers for AMD/Intel and the CPU driver "
              "lavapipe, or the NVIDIA driver) and the loader (libvulkan1)");
}

std::shared_ptr<Instance> Instance::get(const InstanceOptions& options) {
  static std::mutex mutex;
  static std::map<bool, std::weak_ptr<Instance>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[options.validation];
  if (auto existing = slot.lock()) return existing;
  std::shared_ptr<Instance> created(new Instance(options));
  slot = created;
  return created;
}

Instance::Instance(const InstanceOptions& options) : options_(options) {
  std::string why;
  if (!load_loader(&why)) throw_no_device(why);
  uint32_t version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&version);
  if (version < VK_API_VERSION_1_2)
    throw_no_device("the Vulkan loader supports only API " + std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
                    std::to_string(VK_API_VERSION_MINOR(version)) + " (1.2 needed)");

  std::vector<const char*> layers, extensions;
  VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  VkDebugUtilsMessengerCreateInfoEXT dbg = messenger_info();
  const void* next = nullptr;
  if (options.validation) {
    if (!has_layer("VK_LAYER_KHRONOS_validation"))
      throw_error("Vulkan validation was requested but VK_LAYER_KHRONOS_validation is not installed "
                  "(Debian: vulkan-validationlayers)");
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    dbg.pNext = &features;
    next = &dbg;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "ogx";
  app.pEngineName = "ogx";
  app.apiVersion = VK_API_VERSION_1_3 <= version ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pNext = next;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = (uint32_t)layers.size();
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = (uint32_t)extensions.size();
  info.ppEnabledExtensionNames = extensions.data();
  VkResult r = vkCreateInstance(&info, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) throw_no_device("no Vulkan driver (ICD) is installed");
  if (r != VK_SUCCESS) throw_no_device(std::string("vkCreateInstance failed: ") + result_name(r));
  load_instance_functions(instance_);
  if (options.validation && vkCreateDebugUtilsMessengerEXT) {
    dbg.pNext = nullptr;
    OGX_VK(vkCreateDebugUtilsMessengerEXT(instance_, &dbg, nullptr, &messenger_));
  }
}

Instance::~Instance() {
  if (messenger_) vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

std::vector<VkPhysicalDevice> Instance::physical_devices() const {
  uint32_t n = 0;
  VkResult r = vkEnumeratePhysicalDevices(instance_, &n, nullptr);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return {};
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(instance_, &n, devices.data());
  devices.resize(n);
  return devices;
}

int Instance::validation_message_count() {
  std::lock_guard<std::mutex> lock(g_messages_mutex);
  return g_message_count;
}

std::vector<std::string> Instance::validation_messages() {
  std::lock_guard<std::mutex> lock(g_messages_mutex);
  return g_messages;
}

}  // namespace ogx::vk
