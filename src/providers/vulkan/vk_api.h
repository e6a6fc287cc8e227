// Vulkan entry points loaded at run time from the loader (libvulkan.so.1) with dlopen, so a machine without the
// loader gets an ogx::Error instead of a failed program start. Every function ogx calls is listed once below and
// becomes a pointer in namespace ogx::vk; call sites read like plain Vulkan.
#pragma once
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

#include "common/error.h"

namespace ogx::vk {

#define OGX_VK_GLOBAL_FUNCTIONS(X)         \
  X(vkCreateInstance)                      \
  X(vkEnumerateInstanceVersion)            \
  X(vkEnumerateInstanceLayerProperties)    \
  X(vkEnumerateInstanceExtensionProperties)

#define OGX_VK_INSTANCE_FUNCTIONS(X)               \
  X(vkDestroyInstance)                             \
  X(vkEnumeratePhysicalDevices)                    \
  X(vkGetPhysicalDeviceProperties)                 \
  X(vkGetPhysicalDeviceProperties2)                \
  X(vkGetPhysicalDeviceFeatures2)                  \
  X(vkGetPhysicalDeviceMemoryProperties)           \
  X(vkGetPhysicalDeviceMemoryProperties2)          \
  X(vkGetPhysicalDeviceQueueFamilyProperties)      \
  X(vkEnumerateDeviceExtensionProperties)          \
  X(vkCreateDevice)                                \
  X(vkCreateDebugUtilsMessengerEXT)                \
  X(vkDestroyDebugUtilsMessengerEXT)               \
  X(vkDestroyDevice)                               \
  X(vkGetDeviceQueue)                              \
  X(vkDeviceWaitIdle)                              \
  X(vkCreateBuffer)                                \
  X(vkDestroyBuffer)                               \
  X(vkGetBufferMemoryRequirements)                 \
  X(vkAllocateMemory)                              \
  X(vkFreeMemory)                                  \
  X(vkBindBufferMemory)                            \
  X(vkMapMemory)                                   \
  X(vkUnmapMemory)                                 \
  X(vkGetBufferDeviceAddress)                      \
  X(vkCreateCommandPool)                           \
  X(vkDestroyCommandPool)                          \
  X(vkAllocateCommandBuffers)                      \
  X(vkFreeCommandBuffers)                          \
  X(vkBeginCommandBuffer)                          \
  X(vkEndCommandBuffer)                            \
  X(vkResetCommandBuffer)                          \
  X(vkCmdBindPipeline)                             \
  X(vkCmdPushConstants)                            \
  X(vkCmdDispatch)                                 \
  X(vkCmdPipelineBarrier)                          \
  X(vkCmdCopyBuffer)                               \
  X(vkCmdFillBuffer)                               \
  X(vkCmdWriteTimestamp)                           \
  X(vkQueueSubmit)                                 \
  X(vkQueueWaitIdle)                               \
  X(vkCreateSemaphore)                             \
  X(vkDestroySemaphore)                            \
  X(vkWaitSemaphores)                              \
  X(vkGetSemaphoreCounterValue)                    \
  X(vkCreateShaderModule)                          \
  X(vkDestroyShaderModule)                         \
  X(vkCreatePipelineLayout)                        \
  X(vkDestroyPipelineLayout)                       \
  X(vkCreateComputePipelines)                      \
  X(vkDestroyPipeline)                             \
  X(vkCreateQueryPool)                             \
  X(vkDestroyQueryPool)                            \
  X(vkGetQueryPoolResults)                         \
  X(vkCmdResetQueryPool)                           \
  X(vkGetPhysicalDeviceCooperativeMatrixPropertiesNV) /* null without VK_NV_cooperative_matrix */ \
  X(vkGetPipelineExecutablePropertiesKHR)             /* null without VK_KHR_pipeline_executable_properties */ \
  X(vkGetPipelineExecutableStatisticsKHR)

#define OGX_VK_DECLARE(name) inline PFN_##name name = nullptr;
OGX_VK_GLOBAL_FUNCTIONS(OGX_VK_DECLARE)
OGX_VK_INSTANCE_FUNCTIONS(OGX_VK_DECLARE)
#undef OGX_VK_DECLARE

// Opens the loader and fills the global entry points; false (with *why set) when there is no loader.
bool load_loader(std::string* why);
// Fills the instance-level entry points (device functions go through the loader's trampolines).
void load_instance_functions(VkInstance instance);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc.
const char* result_name(VkResult r);

}  // namespace ogx::vk

// Throws ogx::Error naming the call and the VkResult when a Vulkan call fails.
#define OGX_VK(call)                                                                               \
  do {                                                                                             \
    VkResult ogx_vk_r_ = (call);                                                                   \
    if (ogx_vk_r_ != VK_SUCCESS) ::ogx::throw_error(#call, " failed: ", ::ogx::vk::result_name(ogx_vk_r_)); \
  } while (0)
