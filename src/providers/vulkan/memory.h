// Device memory: large device-local blocks sub-allocated into tensors, host-visible buffers for staging, readback and
// per-step parameters. Every buffer has a buffer device address; kernels address tensors through it (push constants),
// so a tensor may exceed maxStorageBufferRange (128 MiB on lavapipe) and dispatches need no descriptor sets.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/tensor.h"
#include "providers/vulkan/vk_api.h"

namespace ogx::vk {

// A byte range of one VkBuffer; `address` is the device address of its first byte.
struct BufferSlice {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;  // bytes from the VkBuffer's start
  VkDeviceSize size = 0;    // bytes
  VkDeviceAddress address = 0;
  BufferSlice sub(VkDeviceSize off, VkDeviceSize bytes) const { return {buffer, offset + off, bytes, address + off}; }
  bool overlaps(const BufferSlice& o) const {
    return buffer == o.buffer && offset < o.offset + o.size && o.offset < offset + size;
  }
};

// A device tensor: dtype + shape over a slice.
struct TensorView {
  BufferSlice mem;  // numel * dtype_size bytes
  DType dtype = DType::undefined;
  Shape shape;
  int64_t numel() const { return shape_numel(shape); }
};

// A VkBuffer with its own memory (host-visible ones stay mapped).
struct RawBuffer {
  VkDevice device = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;  // bytes
  VkDeviceAddress address = 0;
  void* mapped = nullptr;  // host pointer for host-visible buffers
  bool device_local = false;  // its memory type is device-local (host-visible ones: the BAR / unified memory)
  BufferSlice slice() const { return {buffer, 0, size, address}; }
  void destroy();
};

class DeviceAllocator;

// A small host-visible, device-addressable buffer for values that change every step (sequence lengths, positions):
// the host writes it between replays of a recorded step; submission makes the writes visible to the device.
class HostVisibleBuffer {
 public:
  HostVisibleBuffer() = default;
  // cached: host-cached memory, for buffers the host reads (readback of results).
  HostVisibleBuffer(DeviceAllocator& allocator, const std::string& name, VkDeviceSize bytes, bool cached = false);
  // Host-visible memory that is also device-local where the device has such a type (resizable BAR, unified memory):
  // kernels may then read it in place at device speed. device_local() says which memory it got.
  static HostVisibleBuffer device_local_if_possible(DeviceAllocator& allocator, const std::string& name,
                                                    VkDeviceSize bytes);
  HostVisibleBuffer(HostVisibleBuffer&& o) noexcept : buf_(o.buf_) { o.buf_ = RawBuffer{}; }
  HostVisibleBuffer& operator=(HostVisibleBuffer&& o) noexcept;
  ~HostVisibleBuffer() { buf_.destroy(); }
  void write(const void* data, VkDeviceSize bytes, VkDeviceSize offset = 0);  // only while no step using it runs
  void read(void* data, VkDeviceSize bytes, VkDeviceSize offset = 0) const;  // after the step writing it completed
  TensorView view(DType dtype, Shape shape) const;
  BufferSlice slice() const { return buf_.slice(); }
  bool device_local() const { return buf_.device_local; }

 private:
  explicit HostVisibleBuffer(RawBuffer buf) : buf_(buf) {}
  RawBuffer buf_;  // host-visible, coherent, mapped
};

// A sub-allocated device-local tensor buffer; returns its range to the allocator when destroyed.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceAllocator* owner, int block, BufferSlice slice, std::string name)
      : owner_(owner), block_(block), slice_(slice), name_(std::move(name)) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer() { release(); }
  void release();
  const BufferSlice& slice() const { return slice_; }
  TensorView view(DType dtype, Shape shape) const;
  const std::string& name() const { return name_; }
  VkDeviceSize size() const { return slice_.size; }
  // The same memory, not owned: valid while this buffer lives (nodes sharing one uploaded weight).
  DeviceBuffer alias() const { return DeviceBuffer(nullptr, block_, slice_, name_); }

 private:
  DeviceAllocator* owner_ = nullptr;
  int block_ = -1;
  BufferSlice slice_;
  std::string name_;
};

class DeviceAllocator {
 public:
  DeviceAllocator(VkDevice device, const VkPhysicalDeviceMemoryProperties& props, VkDeviceSize block_bytes);
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // Device-local buffer of `bytes` (256-byte aligned). Out of memory: ogx::Error naming `name` and the sizes.
  DeviceBuffer allocate(const std::string& name, VkDeviceSize bytes);
  void free(int block, VkDeviceSize offset, VkDeviceSize size);

  // Host-visible, coherent, mapped buffer (staging, readback, per-step parameters).
  RawBuffer create_host_buffer(const std::string& name, VkDeviceSize bytes, bool cached);
  RawBuffer create_buffer(const std::string& name, VkDeviceSize bytes, VkMemoryPropertyFlags required,
                          VkMemoryPropertyFlags preferred);

  VkDeviceSize bytes_in_use() const { return in_use_; }
  double create_ms() const { return create_ms_; }  // time spent creating buffers and allocating their memory
  VkDeviceSize bytes_reserved() const;  // sum of block sizes
  // Caps the device-local bytes held in blocks (0: the heap's size is the only limit); `what` names the setting in
  // errors (the provider option).
  void set_budget(VkDeviceSize bytes, std::string what);

 private:
  struct FreeRange {
    VkDeviceSize offset, size;  // bytes
  };
  struct Block {
    RawBuffer buf;
    std::vector<FreeRange> free;  // sorted by offset, coalesced
  };
  bool try_place(int block, VkDeviceSize bytes, VkDeviceSize* offset);
  int memory_type(uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const;

  VkDevice device_;
  double create_ms_ = 0;
  VkPhysicalDeviceMemoryProperties props_;
  VkDeviceSize block_bytes_;
  std::vector<Block> blocks_;
  VkDeviceSize in_use_ = 0;
  VkDeviceSize budget_ = 0;  // bytes, 0 = none
  std::string budget_name_;
};

}  // namespace ogx::vk
