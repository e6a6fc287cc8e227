// Host <-> device copies through bounded host-visible rings. Uploads ("upload heap") stream through
// `staging_bytes` of host memory split into slots that are refilled while earlier slots copy, so loading a model
// never holds a second full copy of the weights in host memory. Readbacks go through a ring of `readback_bytes`.
#pragma once
#include <functional>
#include <vector>

#include "providers/vulkan/memory.h"

namespace ogx::vk {

class Context;

class TransferRing {
 public:
  TransferRing(Context& ctx, VkDeviceSize staging_bytes, VkDeviceSize readback_bytes);
  ~TransferRing();

  // Copies `bytes` from host memory into dst at dst_offset. Returns once the source may be reused (the copy may
  // still be in flight; later submissions on the queue see it).
  void upload(const BufferSlice& dst, VkDeviceSize dst_offset, const void* src, VkDeviceSize bytes);
  // Streams `bytes` produced chunk by chunk: produce(offset, out, n) writes bytes [offset, offset+n) of the
  // destination into out (used to re-layout weights, e.g. transpose, without a full host copy).
  void upload_generated(const BufferSlice& dst, VkDeviceSize bytes,
                        const std::function<void(VkDeviceSize offset, void* out, VkDeviceSize n)>& produce);
  void upload_tensor(const TensorView& dst, const Tensor& src);  // dtypes and sizes must match
  // Waits for all earlier work, then copies device bytes to host memory.
  void download(const BufferSlice& src, VkDeviceSize src_offset, void* dst, VkDeviceSize bytes);
  Tensor download_tensor(const TensorView& src);
  void fill_zero(const BufferSlice& dst);
  void flush();  // waits until every upload has landed

  VkDeviceSize staging_bytes() const { return staging_.size; }
  uint64_t uploaded_bytes() const { return uploaded_; }
  double host_copy_ms() const { return host_copy_ms_; }  // uploads: host copies into the upload heap
  double slot_wait_ms() const { return slot_wait_ms_; }  // uploads: waits for a slot's earlier copy to finish

 private:
  struct Slot {
    VkDeviceSize offset = 0;  // bytes into staging_
    VkCommandBuffer cb = VK_NULL_HANDLE;
    uint64_t done = 0;  // timeline value of its last copy
  };
  Slot& next_slot();
  void submit_copy(Slot& slot, VkBuffer src, VkDeviceSize src_off, const BufferSlice& dst, VkDeviceSize dst_off,
                   VkDeviceSize bytes);

  Context& ctx_;
  RawBuffer staging_;   // host-visible upload heap, staging_bytes
  RawBuffer readback_;  // host-visible cached, readback_bytes
  VkDeviceSize slot_bytes_ = 0;
  std::vector<Slot> slots_;
  size_t next_ = 0;
  Slot readback_slot_;
  uint64_t uploaded_ = 0;
  double host_copy_ms_ = 0, slot_wait_ms_ = 0;
};

// Records a global barrier making earlier compute/transfer writes visible to later compute/transfer work.
void record_full_barrier(VkCommandBuffer cb);

}  // namespace ogx::vk
