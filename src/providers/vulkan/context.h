// A Vulkan provider context: the selected device, one compute queue with a timeline semaphore, the device-memory
// allocator, the staging rings and the pipeline library. One Context per session, but a
// target and its draft model share one (SessionOptions::share_device_with); not thread-safe.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "providers/vulkan/device_selection.h"
#include "providers/vulkan/memory.h"
#include "providers/vulkan/pipeline.h"
#include "providers/vulkan/tuning.h"

namespace ogx::vk {

class TransferRing;

struct ContextOptions {
  ProviderOptions provider;
  InstanceOptions instance;
  VkDeviceSize block_bytes = 256ull << 20;     // device-local block size sub-allocated into tensors
  VkDeviceSize staging_bytes = 64ull << 20;    // upload heap: host memory used while loading weights
  VkDeviceSize readback_bytes = 16ull << 20;   // readback ring
  std::optional<Tuning> tuning;                // replaces the table's row (tests of every row, tuning work)
};

class Context {
 public:
  explicit Context(const ContextOptions& options);
  // From the provider's string options ({"device_id","0"}, ...).
  static std::unique_ptr<Context> create(const std::map<std::string, std::string>& provider_options,
                                         const InstanceOptions& instance = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& info() const { return info_; }
  const ProviderOptions& options() const { return options_.provider; }
  const Tuning& tuning() const { return tuning_; }
  // The fp16 cooperative-matrix (matrix unit) kernels are enabled: the device offers VK_NV_cooperative_matrix's
  // 16x16x16 fp16 -> fp32 shape with 32-lane subgroups, and disable_metacommands is off.
  bool coopmat_f16() const { return coopmat_f16_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  VkCommandPool command_pool() const { return pool_; }
  DeviceAllocator& memory() { return *allocator_; }
  PipelineLibrary& pipelines() { return *pipelines_; }
  TransferRing& transfers() { return *transfers_; }

  // Submits one command buffer, signalling the timeline; returns the value that marks its completion.
  // VK_ERROR_DEVICE_LOST (from the submit or a wait): ogx::Error saying so, and the context is lost for good: every
  // later submit or wait fails at once with an error naming the loss (a new model opens a new device).
  uint64_t submit(VkCommandBuffer cb);
  // Host waits until the timeline reaches value: polls for up to kSpinWaitUs, then blocks.
  void wait(uint64_t value);
  static constexpr uint32_t kSpinWaitUs = 20000;
  void wait_idle();           // everything submitted so far
  // For destructors: waits as wait() but never throws (returns at once on a lost device, logs other errors).
  void wait_for_teardown(uint64_t value) noexcept;
  void wait_idle_for_teardown() noexcept { wait_for_teardown(next_value_); }
  bool device_lost() const { return lost_; }
  uint64_t submit_count() const { return submits_; }
  double wait_ms() const { return wait_ms_; }  // host time spent in wait() (every caller)

  VkCommandBuffer allocate_command_buffer();
  void free_command_buffer(VkCommandBuffer cb);

 private:
  void create_device(VkPhysicalDevice physical);
  void check_not_lost() const;
  [[noreturn]] void fail_device_lost(const char* where);

  ContextOptions options_;
  std::shared_ptr<Instance> instance_;
  DeviceInfo info_;
  Tuning tuning_;
  VkDevice device_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  uint64_t next_value_ = 0;  // last value a submission signals
  uint64_t submits_ = 0;
  double wait_ms_ = 0;
  bool lost_ = false;  // VK_ERROR_DEVICE_LOST was seen: nothing runs on this device any more
  bool coopmat_f16_ = false;
  bool pipeline_statistics_ = false;  // enable_pipeline_statistics on a device that offers them
  std::unique_ptr<DeviceAllocator> allocator_;
  std::unique_ptr<PipelineLibrary> pipelines_;
  std::unique_ptr<TransferRing> transfers_;
};

// Test hook: the next submission of any context fails as with VK_ERROR_DEVICE_LOST (tests of device loss on a
// driver that never loses its device).
void inject_device_loss_for_tests();

}  // namespace ogx::vk
