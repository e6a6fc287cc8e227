// The Vulkan session's paged KV pool (graph/kv_pool.h): growth by chunks, block ids naming their own memory, reuse.
#include <algorithm>
#include <cstring>

#include "providers/vulkan/graph/kv_pool.h"
#include "providers/vulkan/transfer.h"
#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {
namespace {

class VulkanKvPoolTest : public VulkanTest {};

TEST_F(VulkanKvPoolTest, KvPoolTakesMoreBlocksThanOneChunkHolds) {
  // A block: 1 layer x (key, value) x 16 positions x 64 x 2 bytes = 4 KiB; chunks of 1024 blocks. One request for
  // 2500 blocks (a prompt of 5000 positions over 8 KV heads) grows the pool by three chunks: every block id must name
  // its own memory inside a chunk (a single oversized chunk gave ids that named blocks of chunks never allocated).
  graph::KvPool pool(ctx(), 0);
  pool.configure({8}, 64, DType::f16);
  std::vector<int32_t> blocks = pool.take(2500);
  ASSERT_EQ(blocks.size(), 2500u);
  EXPECT_GE(pool.blocks_total(), 2500u);
  EXPECT_EQ(pool.blocks_held(), 2500u);
  std::vector<BufferSlice> slices;
  for (int32_t b : blocks) slices.push_back(pool.slice(b));
  std::sort(slices.begin(), slices.end(), [](const BufferSlice& a, const BufferSlice& b) { return a.address < b.address; });
  for (size_t i = 0; i < slices.size(); i++) {
    ASSERT_NE(slices[i].buffer, VkBuffer{}) << "block " << i;
    ASSERT_EQ(slices[i].size, pool.block_bytes());
    if (i > 0) ASSERT_LE(slices[i - 1].address + slices[i - 1].size, slices[i].address) << "blocks overlap";
  }
  // The last block of the request holds what is written into it (its memory is the pool's).
  std::vector<uint32_t> marker(pool.block_bytes() / 4);
  for (size_t i = 0; i < marker.size(); i++) marker[i] = 0x9e3779b9u * (uint32_t)(i + 1);
  ctx().transfers().upload(pool.slice(blocks.back()), 0, marker.data(), pool.block_bytes());
  ctx().transfers().flush();
  Tensor back = ctx().transfers().download_tensor(
      TensorView{pool.slice(blocks.back()), DType::i32, {(int64_t)marker.size()}});
  EXPECT_EQ(std::memcmp(back.raw(), marker.data(), pool.block_bytes()), 0);
  pool.give(blocks);
  EXPECT_EQ(pool.blocks_held(), 0u);
  EXPECT_EQ(pool.take(2500).size(), 2500u);  // the same chunks serve again
  EXPECT_EQ(pool.blocks_total(), 3072u);
}

}  // namespace
}  // namespace ogx::vk::test
