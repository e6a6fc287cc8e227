// The paged KV cache of a Vulkan session. A block holds kKvBlock positions of one KV head, keys and values of every
// GroupQueryAttention layer ([layers][key, value][kKvBlock][head_size]). Blocks come from chunks of device memory
// allocated as the pool grows (never moved: a block's address is fixed while it is held) and go back to a free list
// when the state holding them dies. A KvState holds each (row, head)'s blocks; a run's block table (uint64
// [rows, heads, max_blocks], the device address of every block) is a step value the host writes before each
// submission (shaders/attention_common.glsl), so a recorded step replays whatever blocks the rows hold and a
// sequence growing into a new block needs no new recording.
// Blocks are shared between rows (beam search): a block is counted by the rows that hold it and goes back to the free
// list when the last lets go. Only final blocks are shared — every position in them written, none written again —
// so a run never writes a block another row reads.
#pragma once
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "exec/decode_session.h"
#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"
#include "providers/vulkan/kernels/attention.h"

namespace ogx::vk::graph {

class VulkanKvState;
using kernels::kKvBlock;
// Block tables of recorded steps are a multiple of this many positions wide: a step is recorded again only when the
// longest row crosses such a multiple (not at every block).
constexpr int64_t kKvCapacityStep = 256;
// The block-table width (positions) of the recorded step of a run whose longest row ends at `total`: a multiple of
// kKvCapacityStep for decode-sized steps; for a prompt's step (a prompt or a chunk of one: more than a few tokens
// per row, plan_cache.cpp) the next power of two, so the chunks of a long prompt (DecodeSession::prefill_chunk)
// share a few recordings — 2048, 4096, 8192, 16384, 32768 for a 32k prompt in chunks of 2048 — instead of one per
// chunk.
inline int64_t kv_capacity(int64_t total, bool prompt_step) {
  int64_t cap = (total + kKvCapacityStep - 1) / kKvCapacityStep * kKvCapacityStep;
  if (!prompt_step) return cap;
  int64_t pow2 = kKvCapacityStep;
  while (pow2 < cap) pow2 *= 2;
  return pow2;
}

class KvPool {
 public:
  // budget_bytes: the most device memory the pool may take (0: until the device runs out).
  KvPool(Context& ctx, VkDeviceSize budget_bytes) : ctx_(ctx), budget_(budget_bytes) {}
  // The block layout, fixed at the first recorded step: KV heads per layer, head size and dtype.
  void configure(const std::vector<int64_t>& kv_heads, int64_t head_size, DType dtype);
  bool configured() const { return block_bytes_ > 0; }
  int64_t max_heads() const { return max_heads_; }
  uint32_t key_offset(size_t layer) const { return (uint32_t)(2 * layer * layer_elems_); }  // elements
  uint32_t value_offset(size_t layer) const { return (uint32_t)((2 * layer + 1) * layer_elems_); }
  // n free blocks, each held once (all or none); throws an ogx::Error naming the budget when the pool cannot grow.
  std::vector<int32_t> take(size_t n);
  // One more holder of a held block.
  void share(int32_t block) { refs_[(size_t)block]++; }
  bool shared(int32_t block) const { return refs_[(size_t)block] > 1; }
  // One holder fewer of each block; a block no one holds goes back to the free list.
  void give(const std::vector<int32_t>& blocks);
  // The session goes: its device memory with it (states that outlive it hold block ids of nothing; never run).
  void free_memory();
  VkDeviceAddress address(int32_t block) const;
  BufferSlice slice(int32_t block) const;
  VkDeviceSize block_bytes() const { return block_bytes_; }
  size_t blocks_held() const { return total_blocks_ - free_.size(); }
  size_t blocks_total() const { return total_blocks_; }
  VkDeviceSize budget() const { return budget_; }
  // The states alive now (a pointer the session kept may name a state destroyed since): the state, or null.
  VulkanKvState* live(const KvState* s, uint64_t serial) const;
  void attach(VulkanKvState* s) { live_.insert(s); }
  uint64_t next_serial() { return ++serials_; }
  void detach(VulkanKvState* s) { live_.erase(s); }

 private:
  void grow(size_t at_least);
  Context& ctx_;
  VkDeviceSize budget_;
  VkDeviceSize block_bytes_ = 0;
  int64_t layer_elems_ = 0;  // kKvBlock * head_size: one layer's keys (or values) of a block
  int64_t max_heads_ = 0;
  size_t blocks_per_chunk_ = 0;
  size_t total_blocks_ = 0;
  std::vector<DeviceBuffer> chunks_;
  std::vector<int32_t> free_;  // block ids (chunk * blocks_per_chunk + index), taken from the back
  std::vector<uint32_t> refs_;  // [block id] how many (row, head) lists hold the block (0: free or unused id)
  std::set<VulkanKvState*> live_;
  uint64_t serials_ = 0;
};

// A generator's KV cache on the device: blocks per (row, head), taken as its rows grow.
class VulkanKvState : public KvState {
 public:
  VulkanKvState(std::shared_ptr<KvPool> pool, const void* session, int rows, int64_t max_length)
      : pool_(std::move(pool)), session_(session), rows_(rows), max_length_(max_length), serial_(pool_->next_serial()) {
    pool_->attach(this);
  }
  ~VulkanKvState() override;
  int rows() const override { return rows_; }
  int64_t length() const override { return length_; }
  size_t bytes() const override;
  const void* session() const { return session_; }
  uint64_t serial() const { return serial_; }  // unique within the pool
  int64_t max_length() const { return max_length_; }
  // Every row holds blocks for `positions` (taken from the pool, all or none: on failure nothing changes).
  void reserve(int64_t positions);
  void set_length(int64_t n) { length_ = n; }
  // The state's rows of a block table [rows, pool heads, max_blocks] (unheld entries: the row's first block, which
  // the kernels never read there).
  void write_table(uint64_t* table, int64_t max_blocks) const;
  // Rows become copies of source rows (beam search); records the block copies into `rec` and returns the blocks to
  // give back once they ran. Positions below `final_positions` are final in every row (no run writes them again):
  // their whole blocks are shared by the rows that continue one source row, not copied; the rest is copied.
  std::vector<int32_t> reorder(const std::vector<int32_t>& source_rows, int64_t final_positions,
                               CommandRecorder& rec);
  // After a rewind to length(): blocks a run may write again become the row's own, copies recorded into `rec`
  // (run it before the next run); returns how many.
  size_t unshare_writable(CommandRecorder& rec);
  size_t writable_shared() const;  // (row, head) blocks a run may write that another row also holds
  // The blocks of (row, head), in position order.
  const std::vector<int32_t>& blocks(int row, int head) const {
    return blocks_[(size_t)row * (size_t)pool_->max_heads() + (size_t)head];
  }
  std::vector<uint32_t> rng;  // its rows' device random state while other rows sample (empty: not yet seeded)

 private:
  size_t first_writable_block() const;
  size_t blocks_per_row() const { return rows_ == 0 || blocks_.empty() ? 0 : blocks_[0].size(); }
  std::shared_ptr<KvPool> pool_;
  const void* session_;
  int rows_;
  int64_t max_length_;
  int64_t length_ = 0;
  int64_t unwritten_slack_ = 0;  // length_ - the final positions of the last reorder (rows' trailing prompt pads)
  uint64_t serial_;
  std::vector<std::vector<int32_t>> blocks_;  // [rows * heads][blocks]: each (row, head)'s blocks in order
};

}  // namespace ogx::vk::graph
