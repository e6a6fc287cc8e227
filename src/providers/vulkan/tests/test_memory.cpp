// Allocator, upload heap / readback rings, large tensors beyond maxStorageBufferRange, out-of-memory errors.
#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

class VulkanMemoryTest : public VulkanTest {};

TEST_F(VulkanMemoryTest, SubAllocationReusesFreedRanges) {
  auto& mem = ctx().memory();
  VkDeviceSize before = mem.bytes_in_use();
  DeviceBuffer a = mem.allocate("a", 1000);
  DeviceBuffer b = mem.allocate("b", 5000);
  EXPECT_EQ(a.slice().buffer, b.slice().buffer);  // same block
  EXPECT_FALSE(a.slice().overlaps(b.slice()));
  EXPECT_EQ(a.slice().address % 256, 0u);
  VkDeviceSize a_offset = a.slice().offset;
  a.release();
  DeviceBuffer c = mem.allocate("c", 900);
  EXPECT_EQ(c.slice().offset, a_offset);
  c.release();
  b.release();
  EXPECT_EQ(mem.bytes_in_use(), before);
}

TEST_F(VulkanMemoryTest, UploadDownloadThroughRingsLargerThanTheHeap) {
  // 3x the upload heap: every slot is reused; bytes are checked exactly.
  size_t n = ctx().transfers().staging_bytes() * 3 / 4 + 77;
  std::vector<uint32_t> data(n);
  for (size_t i = 0; i < n; i++) data[i] = (uint32_t)(i * 2654435761u);
  DeviceBuffer buf = ctx().memory().allocate("big", n * 4);
  ctx().transfers().upload(buf.slice(), 0, data.data(), n * 4);
  std::vector<uint32_t> back(n);
  ctx().transfers().download(buf.slice(), 0, back.data(), n * 4);
  EXPECT_EQ(back, data);
}

TEST_F(VulkanMemoryTest, TensorBeyondMaxStorageBufferRangeIsAddressable) {
  // A table larger than one storage-buffer binding may span; gather its last rows through the device address.
  uint64_t range = ctx().info().max_storage_buffer_range;
  if (range > (1ull << 30)) GTEST_SKIP() << "maxStorageBufferRange " << range << " is too large to exceed in a test";
  int64_t D = 1024, V = (int64_t)(range / (D * 4)) + 8;
  DeviceBuffer table = ctx().memory().allocate("embedding", (VkDeviceSize)(V * D * 4));
  ASSERT_GT(table.size(), range);
  std::vector<float> last_rows(8 * D);
  for (size_t i = 0; i < last_rows.size(); i++) last_rows[i] = (float)i * 0.5f + 1.0f;
  ctx().transfers().upload(table.slice(), (VkDeviceSize)((V - 8) * D * 4), last_rows.data(), last_rows.size() * 4);
  TensorView ids = upload_i64({V - 1, V - 8, -2}, {3});
  TensorView out = empty(DType::f32, {3, D});
  CommandRecorder rec(ctx());
  rec.begin();
  kernels::gather_rows(rec, table.view(DType::f32, {V, D}), ids, out);
  rec.end();
  rec.run();
  auto got = download(out);
  for (int64_t d = 0; d < D; d++) {
    ASSERT_EQ(got[d], last_rows[7 * D + d]);
    ASSERT_EQ(got[D + d], last_rows[d]);
    ASSERT_EQ(got[2 * D + d], last_rows[6 * D + d]);
  }
}

TEST_F(VulkanMemoryTest, OutOfMemoryNamesTheTensor) {
  try {
    DeviceBuffer huge = ctx().memory().allocate("model.layers.0.mlp.huge", 1ull << 50);
    FAIL() << "a 1 PiB allocation succeeded";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("model.layers.0.mlp.huge"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(1ull << 50)), std::string::npos) << msg;
  }
  Instance::validation_message_count();  // the failed vkAllocateMemory is a legal call
}

}  // namespace
}  // namespace ogx::vk::test
