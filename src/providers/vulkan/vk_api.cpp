#include "providers/vulkan/vk_api.h"

#include <dlfcn.h>

#include <mutex>

namespace ogx::vk {

namespace {
PFN_vkGetInstanceProcAddr g_get_instance_proc = nullptr;
}

bool load_loader(std::string* why) {
  static std::once_flag once;
  static bool ok = false;
  static std::string error;
  std::call_once(once, [] {
    void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      error = std::string("the Vulkan loader libvulkan.so.1 could not be opened (") + (e ? e : "?") + ")";
      return;
    }
    g_get_instance_proc = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
    if (!g_get_instance_proc) {
      error = "libvulkan.so.1 has no vkGetInstanceProcAddr";
      return;
    }
#define OGX_VK_LOAD_GLOBAL(name) name = (PFN_##name)g_get_instance_proc(nullptr, #name);
    OGX_VK_GLOBAL_FUNCTIONS(OGX_VK_LOAD_GLOBAL)
#undef OGX_VK_LOAD_GLOBAL
    ok = vkCreateInstance != nullptr;
    if (!ok) error = "the Vulkan loader has no vkCreateInstance";
  });
  if (!ok && why) *why = error;
  return ok;
}

void load_instance_functions(VkInstance instance) {
#define OGX_VK_LOAD_INSTANCE(name) \
  if (!name) name = (PFN_##name)g_get_instance_proc(instance, #name);
  OGX_VK_INSTANCE_FUNCTIONS(OGX_VK_LOAD_INSTANCE)
#undef OGX_VK_LOAD_INSTANCE
}

const char* result_name(VkResult r) {
  switch (r) {
#define C(x) \
  case x:    \
    return #x;
    C(VK_SUCCESS) C(VK_NOT_READY) C(VK_TIMEOUT) C(VK_INCOMPLETE) C(VK_ERROR_OUT_OF_HOST_MEMORY)
    C(VK_ERROR_OUT_OF_DEVICE_MEMORY) C(VK_ERROR_INITIALIZATION_FAILED) C(VK_ERROR_DEVICE_LOST)
    C(VK_ERROR_MEMORY_MAP_FAILED) C(VK_ERROR_LAYER_NOT_PRESENT) C(VK_ERROR_EXTENSION_NOT_PRESENT)
    C(VK_ERROR_FEATURE_NOT_PRESENT) C(VK_ERROR_INCOMPATIBLE_DRIVER) C(VK_ERROR_TOO_MANY_OBJECTS)
    C(VK_ERROR_FORMAT_NOT_SUPPORTED) C(VK_ERROR_FRAGMENTED_POOL) C(VK_ERROR_UNKNOWN)
    C(VK_ERROR_OUT_OF_POOL_MEMORY) C(VK_ERROR_INVALID_EXTERNAL_HANDLE) C(VK_ERROR_FRAGMENTATION)
    C(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
#undef C
    default:
      return "VkResult(unknown)";
  }
}

}  // namespace ogx::vk
