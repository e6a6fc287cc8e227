#include "providers/vulkan/transfer.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "providers/vulkan/context.h"

namespace ogx::vk {

namespace {
constexpr int kUploadSlots = 4;
constexpr VkPipelineStageFlags kStages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT;
}  // namespace

void record_full_barrier(VkCommandBuffer cb) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                    VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, kStages, kStages, 0, 1, &b, 0, nullptr, 0, nullptr);
}

TransferRing::TransferRing(Context& ctx, VkDeviceSize staging_bytes, VkDeviceSize readback_bytes) : ctx_(ctx) {
  staging_ = ctx.memory().create_host_buffer("upload heap", staging_bytes, false);
  readback_ = ctx.memory().create_host_buffer("readback ring", readback_bytes, true);
  slot_bytes_ = staging_bytes / kUploadSlots / 256 * 256;
  OGX_CHECK(slot_bytes_ > 0, "upload heap of ", staging_bytes, " bytes is too small");
  for (int i = 0; i < kUploadSlots; i++) {
    Slot s;
    s.offset = (VkDeviceSize)i * slot_bytes_;
    s.cb = ctx.allocate_command_buffer();
    slots_.push_back(s);
  }
  readback_slot_.cb = ctx.allocate_command_buffer();
}

TransferRing::~TransferRing() {
  ctx_.wait_idle_for_teardown();
  for (auto& s : slots_) ctx_.free_command_buffer(s.cb);
  ctx_.free_command_buffer(readback_slot_.cb);
  staging_.destroy();
  readback_.destroy();
}

TransferRing::Slot& TransferRing::next_slot() {
  Slot& s = slots_[next_];
  next_ = (next_ + 1) % slots_.size();
  if (s.done) {
    auto t0 = std::chrono::steady_clock::now();
    ctx_.wait(s.done);
    slot_wait_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return s;
}

void TransferRing::submit_copy(Slot& slot, VkBuffer src, VkDeviceSize src_off, const BufferSlice& dst,
                               VkDeviceSize dst_off, VkDeviceSize bytes) {
  OGX_VK(vkResetCommandBuffer(slot.cb, 0));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  OGX_VK(vkBeginCommandBuffer(slot.cb, &bi));
  record_full_barrier(slot.cb);
  VkBufferCopy region{src_off, dst.offset + dst_off, bytes};
  vkCmdCopyBuffer(slot.cb, src, dst.buffer, 1, &region);
  record_full_barrier(slot.cb);
  OGX_VK(vkEndCommandBuffer(slot.cb));
  slot.done = ctx_.submit(slot.cb);
}

void TransferRing::upload(const BufferSlice& dst, VkDeviceSize dst_offset, const void* src, VkDeviceSize bytes) {
  OGX_CHECK(dst_offset + bytes <= dst.size, "upload of ", bytes, " bytes at ", dst_offset, " overruns a ", dst.size,
            "-byte buffer");
  const char* p = static_cast<const char*>(src);
  for (VkDeviceSize done = 0; done < bytes;) {
    VkDeviceSize n = std::min(slot_bytes_, bytes - done);
    Slot& s = next_slot();
    auto t0 = std::chrono::steady_clock::now();
    std::memcpy((char*)staging_.mapped + s.offset, p + done, n);
    host_copy_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    submit_copy(s, staging_.buffer, s.offset, dst, dst_offset + done, n);
    done += n;
  }
  uploaded_ += bytes;
}

void TransferRing::upload_generated(const BufferSlice& dst, VkDeviceSize bytes,
                                    const std::function<void(VkDeviceSize, void*, VkDeviceSize)>& produce) {
  OGX_CHECK(bytes <= dst.size, "upload of ", bytes, " bytes overruns a ", dst.size, "-byte buffer");
  for (VkDeviceSize done = 0; done < bytes;) {
    VkDeviceSize n = std::min(slot_bytes_, bytes - done);
    Slot& s = next_slot();
    auto t0 = std::chrono::steady_clock::now();
    produce(done, (char*)staging_.mapped + s.offset, n);
    host_copy_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    submit_copy(s, staging_.buffer, s.offset, dst, done, n);
    done += n;
  }
  uploaded_ += bytes;
}

void TransferRing::upload_tensor(const TensorView& dst, const Tensor& src) {
  OGX_CHECK(src.dtype() == dst.dtype && src.numel() == dst.numel(), "upload: host tensor ", dtype_name(src.dtype()),
            shape_str(src.shape()), " does not match device tensor ", dtype_name(dst.dtype), shape_str(dst.shape));
  upload(dst.mem, 0, src.raw(), src.bytes());
}

void TransferRing::download(const BufferSlice& src, VkDeviceSize src_offset, void* dst, VkDeviceSize bytes) {
  char* p = static_cast<char*>(dst);
  for (VkDeviceSize done = 0; done < bytes;) {
    VkDeviceSize n = std::min(readback_.size, bytes - done);
    Slot& s = readback_slot_;
    OGX_VK(vkResetCommandBuffer(s.cb, 0));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    OGX_VK(vkBeginCommandBuffer(s.cb, &bi));
    record_full_barrier(s.cb);
    VkBufferCopy region{src.offset + src_offset + done, 0, n};
    vkCmdCopyBuffer(s.cb, src.buffer, readback_.buffer, 1, &region);
    record_full_barrier(s.cb);
    OGX_VK(vkEndCommandBuffer(s.cb));
    ctx_.wait(ctx_.submit(s.cb));
    std::memcpy(p + done, readback_.mapped, n);
    done += n;
  }
}

Tensor TransferRing::download_tensor(const TensorView& src) {
  Tensor t(src.dtype, src.shape);
  download(src.mem, 0, t.raw(), t.bytes());
  return t;
}

void TransferRing::fill_zero(const BufferSlice& dst) {
  Slot& s = next_slot();
  OGX_VK(vkResetCommandBuffer(s.cb, 0));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  OGX_VK(vkBeginCommandBuffer(s.cb, &bi));
  record_full_barrier(s.cb);
  vkCmdFillBuffer(s.cb, dst.buffer, dst.offset, (dst.size + 3) / 4 * 4, 0);
  record_full_barrier(s.cb);
  OGX_VK(vkEndCommandBuffer(s.cb));
  s.done = ctx_.submit(s.cb);
}

void TransferRing::flush() {
  for (auto& s : slots_)
    if (s.done) ctx_.wait(s.done);
}

}  // namespace ogx::vk
