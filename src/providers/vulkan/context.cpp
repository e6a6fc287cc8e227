#include "providers/vulkan/context.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <sstream>

#include "common/log.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk {

namespace {

std::string fmt_mb(double mb) {
  std::ostringstream os;
  os << mb;
  return os.str();
}

std::atomic<int> g_injected_device_losses{0};  // test hook: submissions left to fail with VK_ERROR_DEVICE_LOST

}  // namespace

void inject_device_loss_for_tests() { g_injected_device_losses++; }

std::unique_ptr<Context> Context::create(const std::map<std::string, std::string>& provider_options,
                                         const InstanceOptions& instance) {
  ContextOptions o;
  o.provider = parse_provider_options(provider_options);
  o.instance = instance;
  return std::make_unique<Context>(o);
}

Context::Context(const ContextOptions& options) : options_(options) {
  instance_ = Instance::get(options.instance);
  auto physical = instance_->physical_devices();
  if (physical.empty()) throw_no_device("the Vulkan loader reports no physical device");
  std::vector<DeviceInfo> devices;
  for (size_t i = 0; i < physical.size(); i++) devices.push_back(describe_device(physical[i], (int)i));
  int chosen = select_device(devices, options.provider);
  info_ = devices[chosen];
  tuning_ = options.tuning ? *options.tuning : tuning_for(info_, options.provider.disable_metacommands);
  apply_tuning_overrides(tuning_, options.provider.tuning_overrides);
  const DeviceFeatures& f = info_.features;
  coopmat_f16_ = !options.provider.disable_metacommands && f.coopmat_f16_nv && f.vulkan_memory_model &&
                 f.fp16_arithmetic && info_.min_subgroup_size == 32 && info_.max_subgroup_size == 32;
  create_device(physical[chosen]);
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(physical[chosen], &mem);
  allocator_ = std::make_unique<DeviceAllocator>(device_, mem, options.block_bytes);
  if (const auto& mb = options.provider.device_memory_budget_mb)
    allocator_->set_budget((VkDeviceSize)(*mb * 1048576.0), "provider option device_memory_budget_mb=" + fmt_mb(*mb));
  pipelines_ = std::make_unique<PipelineLibrary>(device_, pipeline_statistics_);
  transfers_ = std::make_unique<TransferRing>(*this, options.staging_bytes, options.readback_bytes);
}

void Context::create_device(VkPhysicalDevice physical) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, families.data());
  bool found = false;
  for (uint32_t i = 0; i < n && !found; i++)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) queue_family_ = i, found = true;
  OGX_CHECK(found, "Vulkan device ", info_.name, " has no compute queue");

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = queue_family_;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;

  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f.pNext = &f11;
  f11.pNext = &f12;
  f12.bufferDeviceAddress = VK_TRUE;
  f12.timelineSemaphore = VK_TRUE;
  f12.shaderFloat16 = info_.features.fp16_arithmetic;
  f12.storageBuffer8BitAccess = info_.features.storage_8bit;
  f.features.shaderInt64 = info_.features.int64;
  f11.storageBuffer16BitAccess = info_.features.storage_16bit;
  OGX_CHECK(info_.features.storage_16bit, "Vulkan device ", info_.name,
            " lacks storageBuffer16BitAccess, which ogx's fp16 kernels need");

  std::vector<const char*> exts;
  if (info_.features.memory_budget) exts.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  if (coopmat_f16_) {
    exts.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    coop.cooperativeMatrix = VK_TRUE;
    f12.pNext = &coop;
    f12.vulkanMemoryModel = VK_TRUE;  // with device scope: other shaders' device-scope atomics stay valid
    f12.vulkanMemoryModelDeviceScope = VK_TRUE;
  }
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  if (options_.provider.pipeline_statistics) {
    if (info_.features.pipeline_statistics && vkGetPipelineExecutablePropertiesKHR &&
        vkGetPipelineExecutableStatisticsKHR) {
      exts.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
      pe.pipelineExecutableInfo = VK_TRUE;
      pe.pNext = f.pNext;
      f.pNext = &pe;
      pipeline_statistics_ = true;
    } else {
      log_warning("provider option enable_pipeline_statistics: " + info_.name +
                  " does not offer VK_KHR_pipeline_executable_properties; no statistics");
    }
  }
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.pNext = &f;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  di.enabledExtensionCount = (uint32_t)exts.size();
  di.ppEnabledExtensionNames = exts.data();
  OGX_VK(vkCreateDevice(physical, &di, nullptr, &device_));
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = queue_family_;
  OGX_VK(vkCreateCommandPool(device_, &pi, nullptr, &pool_));

  VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  si.pNext = &ti;
  OGX_VK(vkCreateSemaphore(device_, &si, nullptr, &timeline_));
}

Context::~Context() {
  if (!device_) return;
  vkDeviceWaitIdle(device_);
  transfers_.reset();
  pipelines_.reset();
  allocator_.reset();
  vkDestroySemaphore(device_, timeline_, nullptr);
  vkDestroyCommandPool(device_, pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

void Context::check_not_lost() const {
  if (lost_)
    throw_error("the Vulkan device '", info_.name, "' was lost earlier (VK_ERROR_DEVICE_LOST): this model can no ",
                "longer run on it; load the model again (a new model opens the device anew)");
}

void Context::fail_device_lost(const char* where) {
  lost_ = true;
  throw_error("the Vulkan device '", info_.name, "' was lost (VK_ERROR_DEVICE_LOST from ", where, ": the driver ",
              "reset the device or it failed); this model can no longer run on it, load the model again");
}

uint64_t Context::submit(VkCommandBuffer cb) {
  check_not_lost();
  uint64_t value = next_value_ + 1;
  VkTimelineSemaphoreSubmitInfo ti{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  ti.signalSemaphoreValueCount = 1;
  ti.pSignalSemaphoreValues = &value;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = &ti;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &timeline_;
  int injected = g_injected_device_losses.load();
  while (injected > 0 && !g_injected_device_losses.compare_exchange_weak(injected, injected - 1)) {
  }
  const VkResult r = injected > 0 ? VK_ERROR_DEVICE_LOST : vkQueueSubmit(queue_, 1, &si, VK_NULL_HANDLE);
  if (r == VK_ERROR_DEVICE_LOST) fail_device_lost("vkQueueSubmit");
  if (r != VK_SUCCESS) throw_error("vkQueueSubmit failed: ", result_name(r));
  next_value_ = value;
  submits_++;
  return value;
}

void Context::wait(uint64_t value) {
  check_not_lost();
  struct Timed {  // wait_ms_ over every return
    double& total;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    ~Timed() { total += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); }
  } timed{wait_ms_};
  // Poll the timeline for up to kSpinWaitUs first: a decode step takes about a millisecond, and a blocking wait
  // that sleeps costs its wake-up on every token. Longer work (prompts, uploads) then blocks. Not on a CPU driver,
  // whose threads need the cores the poll would take.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinWaitUs);
  for (uint32_t i = 0; info_.type != DeviceType::cpu; i++) {
    uint64_t reached = 0;
    const VkResult r = vkGetSemaphoreCounterValue(device_, timeline_, &reached);
    if (r == VK_ERROR_DEVICE_LOST) fail_device_lost("vkGetSemaphoreCounterValue");
    if (r != VK_SUCCESS) throw_error("vkGetSemaphoreCounterValue failed: ", result_name(r));
    if (reached >= value) return;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline) break;
  }
  VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wi.semaphoreCount = 1;
  wi.pSemaphores = &timeline_;
  wi.pValues = &value;
  const VkResult r = vkWaitSemaphores(device_, &wi, UINT64_MAX);
  if (r == VK_ERROR_DEVICE_LOST) fail_device_lost("vkWaitSemaphores");
  if (r != VK_SUCCESS) throw_error("vkWaitSemaphores failed: ", result_name(r));
}

void Context::wait_idle() { wait(next_value_); }

void Context::wait_for_teardown(uint64_t value) noexcept {
  if (lost_) {  // a lost device completes nothing more: vkDeviceWaitIdle returns at once (it drains a device that
    vkDeviceWaitIdle(device_);  // only the test hook declared lost), so buffers are not freed while pending
    return;
  }
  try {
    wait(value);
  } catch (const Error& e) {
    log_warning(std::string("Vulkan provider teardown: ") + e.what());
  }
}

VkCommandBuffer Context::allocate_command_buffer() {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb;
  OGX_VK(vkAllocateCommandBuffers(device_, &ai, &cb));
  return cb;
}

void Context::free_command_buffer(VkCommandBuffer cb) { vkFreeCommandBuffers(device_, pool_, 1, &cb); }

}  // namespace ogx::vk
