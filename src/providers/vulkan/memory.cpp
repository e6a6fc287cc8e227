#include "providers/vulkan/memory.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace ogx::vk {

namespace {
constexpr VkDeviceSize kAlign = 256;  // >= minStorageBufferOffsetAlignment everywhere, keeps vec4 loads aligned
VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }
constexpr VkBufferUsageFlags kUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
}  // namespace

void RawBuffer::destroy() {
  if (!device) return;
  if (mapped) vkUnmapMemory(device, memory);
  if (buffer) vkDestroyBuffer(device, buffer, nullptr);
  if (memory) vkFreeMemory(device, memory, nullptr);
  *this = RawBuffer{};
}

HostVisibleBuffer::HostVisibleBuffer(DeviceAllocator& allocator, const std::string& name, VkDeviceSize bytes,
                                     bool cached)
    : buf_(allocator.create_host_buffer(name, bytes, cached)) {}

HostVisibleBuffer HostVisibleBuffer::device_local_if_possible(DeviceAllocator& allocator, const std::string& name,
                                                              VkDeviceSize bytes) {
  VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  try {
    return HostVisibleBuffer(allocator.create_buffer(name, bytes, host, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT));
  } catch (const Error&) {  // a small BAR heap may be full: plain host memory serves
    return HostVisibleBuffer(allocator.create_buffer(name, bytes, host, 0));
  }
}

HostVisibleBuffer& HostVisibleBuffer::operator=(HostVisibleBuffer&& o) noexcept {
  if (this != &o) {
    buf_.destroy();
    buf_ = o.buf_;
    o.buf_ = RawBuffer{};
  }
  return *this;
}

void HostVisibleBuffer::write(const void* data, VkDeviceSize bytes, VkDeviceSize offset) {
  OGX_CHECK(offset + bytes <= buf_.size, "HostVisibleBuffer write of ", bytes, " bytes overruns ", buf_.size);
  std::memcpy(static_cast<char*>(buf_.mapped) + offset, data, bytes);
}

void HostVisibleBuffer::read(void* data, VkDeviceSize bytes, VkDeviceSize offset) const {
  OGX_CHECK(offset + bytes <= buf_.size, "HostVisibleBuffer read of ", bytes, " bytes overruns ", buf_.size);
  std::memcpy(data, static_cast<const char*>(buf_.mapped) + offset, bytes);
}

TensorView HostVisibleBuffer::view(DType dtype, Shape shape) const {
  TensorView v{buf_.slice(), dtype, std::move(shape)};
  OGX_CHECK((VkDeviceSize)v.numel() * dtype_size(dtype) <= buf_.size, "HostVisibleBuffer view too large");
  v.mem.size = (VkDeviceSize)v.numel() * dtype_size(dtype);
  return v;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    owner_ = o.owner_;
    block_ = o.block_;
    slice_ = o.slice_;
    name_ = std::move(o.name_);
    o.owner_ = nullptr;
    o.slice_ = BufferSlice{};  // (a moved-from buffer is empty: size() 0)
  }
  return *this;
}

void DeviceBuffer::release() {
  if (owner_) owner_->free(block_, slice_.offset, align_up(slice_.size, kAlign));
  owner_ = nullptr;
}

TensorView DeviceBuffer::view(DType dtype, Shape shape) const {
  TensorView v{slice_, dtype, std::move(shape)};
  OGX_CHECK((VkDeviceSize)v.numel() * dtype_size(dtype) <= slice_.size, "tensor view ", shape_str(v.shape),
            " is larger than buffer '", name_, "' (", slice_.size, " bytes)");
  v.mem.size = (VkDeviceSize)v.numel() * dtype_size(dtype);
  return v;
}

DeviceAllocator::DeviceAllocator(VkDevice device, const VkPhysicalDeviceMemoryProperties& props,
                                 VkDeviceSize block_bytes)
    : device_(device), props_(props), block_bytes_(block_bytes) {}

DeviceAllocator::~DeviceAllocator() {
  for (auto& b : blocks_) b.buf.destroy();
}

void DeviceAllocator::set_budget(VkDeviceSize bytes, std::string what) {
  budget_ = bytes;
  budget_name_ = std::move(what);
}

VkDeviceSize DeviceAllocator::bytes_reserved() const {
  VkDeviceSize total = 0;
  for (auto& b : blocks_) total += b.buf.size;
  return total;
}

int DeviceAllocator::memory_type(uint32_t bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const {
  for (int pass = 0; pass < 2; pass++) {
    VkMemoryPropertyFlags want = pass == 0 ? (required | preferred) : required;
    for (uint32_t i = 0; i < props_.memoryTypeCount; i++)
      if ((bits & (1u << i)) && (props_.memoryTypes[i].propertyFlags & want) == want) return (int)i;
  }
  return -1;
}

RawBuffer DeviceAllocator::create_buffer(const std::string& name, VkDeviceSize bytes, VkMemoryPropertyFlags required,
                                         VkMemoryPropertyFlags preferred) {
  struct Timed {  // create_ms_ over every return
    double& total;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    ~Timed() { total += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); }
  } timed{create_ms_};
  RawBuffer b;
  b.device = device_;
  b.size = bytes;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = bytes;
  info.usage = kUsage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  OGX_VK(vkCreateBuffer(device_, &info, nullptr, &b.buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, b.buffer, &req);
  int type = memory_type(req.memoryTypeBits, required, preferred);
  if (type < 0) {
    b.destroy();
    throw_error("no Vulkan memory type suits buffer '", name, "'");
  }
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.pNext = &flags;
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = (uint32_t)type;
  VkResult r = vkAllocateMemory(device_, &alloc, nullptr, &b.memory);
  if (r != VK_SUCCESS) {
    b.destroy();
    uint32_t heap = props_.memoryTypes[type].heapIndex;
    throw_error("out of device memory allocating '", name, "' (", bytes, " bytes; heap ", heap, " has ",
                props_.memoryHeaps[heap].size, " bytes, ogx holds ", bytes_reserved(), " in blocks): ",
                result_name(r));
  }
  OGX_VK(vkBindBufferMemory(device_, b.buffer, b.memory, 0));
  VkBufferDeviceAddressInfo ai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  ai.buffer = b.buffer;
  b.address = vkGetBufferDeviceAddress(device_, &ai);
  b.device_local = (props_.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
  if (props_.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
    OGX_VK(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  return b;
}

RawBuffer DeviceAllocator::create_host_buffer(const std::string& name, VkDeviceSize bytes, bool cached) {
  VkMemoryPropertyFlags req = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  return create_buffer(name, bytes, req, cached ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : 0);
}

bool DeviceAllocator::try_place(int block, VkDeviceSize bytes, VkDeviceSize* offset) {
  auto& free = blocks_[block].free;
  for (size_t i = 0; i < free.size(); i++) {
    if (free[i].size < bytes) continue;
    *offset = free[i].offset;
    free[i].offset += bytes;
    free[i].size -= bytes;
    if (free[i].size == 0) free.erase(free.begin() + (long)i);
    return true;
  }
  return false;
}

DeviceBuffer DeviceAllocator::allocate(const std::string& name, VkDeviceSize bytes) {
  OGX_CHECK(bytes > 0, "device buffer '", name, "' has zero bytes");
  VkDeviceSize need = align_up(bytes, kAlign);
  VkDeviceSize largest_heap = 0;
  for (uint32_t h = 0; h < props_.memoryHeapCount; h++)
    if (props_.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      largest_heap = std::max(largest_heap, props_.memoryHeaps[h].size);
  if (need > largest_heap)
    throw_error("out of device memory for tensor '", name, "': needs ", bytes, " bytes, the largest device-local heap ",
                "has ", largest_heap, " bytes (", in_use_, " bytes already in use)");
  VkDeviceSize offset = 0;
  int block = -1;
  for (int b = 0; b < (int)blocks_.size() && block < 0; b++)
    if (try_place(b, need, &offset)) block = b;
  if (block < 0) {
    VkDeviceSize size = std::max(need, block_bytes_);
    if (budget_) {  // a new block only within the budget, smaller than usual where that is what is left
      const VkDeviceSize reserved = bytes_reserved(), left = budget_ > reserved ? budget_ - reserved : 0;
      if (need > left)
        throw_error("out of device memory for tensor '", name, "': needs ", bytes, " bytes, the device memory budget (",
                    budget_name_, ", ", budget_, " bytes) has ", left, " bytes left (", in_use_,
                    " bytes in use in blocks of ", reserved, ")");
      size = std::min(size, left);
    }
    Block blk;
    try {
      blk.buf = create_buffer(name, size, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    } catch (const Error& e) {
      throw_error("out of device memory for tensor '", name, "': needs ", bytes, " bytes, ", in_use_,
                  " bytes already in use (", e.what(), ")");
    }
    blk.free.push_back({0, size});
    blocks_.push_back(std::move(blk));
    block = (int)blocks_.size() - 1;
    try_place(block, need, &offset);
  }
  in_use_ += need;
  const RawBuffer& rb = blocks_[block].buf;
  return DeviceBuffer(this, block, BufferSlice{rb.buffer, offset, bytes, rb.address + offset}, name);
}

void DeviceAllocator::free(int block, VkDeviceSize offset, VkDeviceSize size) {
  auto& free = blocks_[block].free;
  auto it = std::lower_bound(free.begin(), free.end(), offset,
                             [](const FreeRange& r, VkDeviceSize o) { return r.offset < o; });
  it = free.insert(it, {offset, size});
  size_t i = (size_t)(it - free.begin());
  if (i + 1 < free.size() && free[i].offset + free[i].size == free[i + 1].offset) {
    free[i].size += free[i + 1].size;
    free.erase(free.begin() + (long)i + 1);
  }
  if (i > 0 && free[i - 1].offset + free[i - 1].size == free[i].offset) {
    free[i - 1].size += free[i].size;
    free.erase(free.begin() + (long)i);
  }
  in_use_ -= size;
}

}  // namespace ogx::vk
