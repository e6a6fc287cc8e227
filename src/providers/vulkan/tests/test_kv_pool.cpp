// The Vulkan session's paged KV pool (graph/kv_pool.h): growth by chunks, block ids naming their own memory, reuse;
// beam reorders that share final blocks between rows and copy the rest, and a rewind that gives back to each row the
// shared blocks it will write again.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

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


// Every block a state's rows hold, each once.
std::set<int32_t> held_by(const graph::VulkanKvState& s, int heads) {
  std::set<int32_t> out;
  for (int r = 0; r < s.rows(); r++)
    for (int h = 0; h < heads; h++) out.insert(s.blocks(r, h).begin(), s.blocks(r, h).end());
  return out;
}

TEST_F(VulkanKvPoolTest, BeamReorderSharesFinalBlocksAndRewindUnsharesWritableOnes) {
  const int heads = 2;
  auto pool = std::make_shared<graph::KvPool>(ctx(), 0);
  pool->configure({heads, heads}, 8, DType::f32);
  const size_t words = pool->block_bytes() / 4;
  auto fill = [&](int32_t block) {  // each block's words name the block
    std::vector<uint32_t> w(words);
    for (size_t i = 0; i < words; i++) w[i] = (uint32_t)block * 7919u + (uint32_t)i * 31u + 1u;
    ctx().transfers().upload(pool->slice(block), 0, w.data(), pool->block_bytes());
    return w;
  };
  auto read = [&](int32_t block) {
    Tensor t = ctx().transfers().download_tensor(TensorView{pool->slice(block), DType::i32, {(int64_t)words}});
    const uint32_t* p = (const uint32_t*)t.raw();
    return std::vector<uint32_t>(p, p + words);
  };
  auto run = [&](auto&& record) {
    CommandRecorder rec(ctx());
    rec.begin();
    auto r = record(rec);
    rec.end();
    rec.run();
    return r;
  };
  {
    graph::VulkanKvState s(pool, nullptr, 2, 128);
    s.reserve(40);  // 3 blocks per (row, head): 12
    s.set_length(40);
    std::map<int32_t, std::vector<uint32_t>> content;
    for (int r = 0; r < 2; r++)
      for (int h = 0; h < heads; h++)
        for (int32_t b : s.blocks(r, h)) content[b] = fill(b);
    ctx().transfers().flush();
    ASSERT_EQ(pool->blocks_held(), 12u);
    // Row 0 continues as rows 0, 1, 2; row 1 as row 3. Positions below 35 are final (a row with 5 trailing pads):
    // blocks 0 and 1 (positions 0..31) are shared, block 2 (32..47) is copied.
    std::vector<int32_t> freed = run([&](CommandRecorder& rec) { return s.reorder({0, 0, 0, 1}, 35, rec); });
    EXPECT_TRUE(freed.empty());
    ASSERT_EQ(s.rows(), 4);
    for (int h = 0; h < heads; h++) {
      for (int r : {1, 2}) {
        EXPECT_EQ(s.blocks(r, h)[0], s.blocks(0, h)[0]);
        EXPECT_EQ(s.blocks(r, h)[1], s.blocks(0, h)[1]);
        EXPECT_NE(s.blocks(r, h)[2], s.blocks(0, h)[2]);
        EXPECT_EQ(read(s.blocks(r, h)[2]), content[s.blocks(0, h)[2]]) << "row " << r << " head " << h;
      }
    }
    EXPECT_EQ(pool->blocks_held(), 16u);  // 12 + one copied block per (copied row, head); 24 with copies of all
    EXPECT_EQ(held_by(s, heads).size(), 16u);
    EXPECT_EQ(s.bytes(), 16 * pool->block_bytes());
    EXPECT_EQ(s.writable_shared(), 0u);
    // A rewind to 30: rows write again from 25 (30 less the 5 pads), inside block 1, shared by rows 0..2 of each head.
    s.set_length(30);
    EXPECT_EQ(s.writable_shared(), 6u);
    std::vector<std::vector<uint32_t>> before;
    for (int h = 0; h < heads; h++) before.push_back(read(s.blocks(0, h)[1]));
    const size_t copies = run([&](CommandRecorder& rec) { return s.unshare_writable(rec); });
    EXPECT_EQ(copies, 4u);  // the last holder keeps its block
    EXPECT_EQ(s.writable_shared(), 0u);
    for (int h = 0; h < heads; h++) {
      std::set<int32_t> ids;
      for (int r : {0, 1, 2}) {
        EXPECT_EQ(s.blocks(r, h)[0], s.blocks(0, h)[0]);  // block 0 stays shared
        ids.insert(s.blocks(r, h)[1]);
        EXPECT_EQ(read(s.blocks(r, h)[1]), before[(size_t)h]) << "row " << r << " head " << h;
      }
      EXPECT_EQ(ids.size(), 3u);
    }
    EXPECT_EQ(pool->blocks_held(), 20u);
    // Rows 0 and 3 are not continued: their own blocks go back, the ones rows 1 and 2 share stay.
    s.set_length(40);
    freed = run([&](CommandRecorder& rec) { return s.reorder({1, 1, 2, 2}, 35, rec); });
    pool->give(freed);
    EXPECT_EQ(pool->blocks_held(), held_by(s, heads).size());
  }
  EXPECT_EQ(pool->blocks_held(), 0u);  // every holder let go
}

}  // namespace
}  // namespace ogx::vk::test
