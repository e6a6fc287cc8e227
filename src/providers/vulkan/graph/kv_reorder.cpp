// Session::reorder_kv_rows on the device: beam search makes row i of every layer's key and value cache
// ([B, kv_heads, capacity, head_size]) a copy of row source_rows[i] after each step, and expands a prompt's row to
// its beams once. Only the positions held (the last run's total_sequence_length) are copied, buffer to buffer in one
// submission: no host round trip.
//  - the same row count: in place; rows that another row reads and that are overwritten themselves are first saved
//    in a scratch buffer (the recorder orders the copies with barriers);
//  - a new row count: new buffers (recorded plans address the old ones and are dropped, as when the cache grows).
#include <algorithm>

#include "common/error.h"
#include "providers/vulkan/graph/session_impl.h"

namespace ogx::vk::graph {

bool VulkanGraphSession::reorder_kv_rows(const std::vector<int32_t>& src) {
  if (kv_.empty() || kv_batch_ == 0 || kv_head_size_ == 0) return false;
  const int64_t R = kv_batch_, n = (int64_t)src.size();
  OGX_CHECK(n > 0, "reorder_kv_rows: no rows");
  for (int32_t s : src) OGX_CHECK(s >= 0 && s < R, "reorder_kv_rows: source row ", s, " outside [0, ", R, ")");
  drop_queued();
  const VkDeviceSize pos_bytes = (VkDeviceSize)kv_head_size_ * dtype_size(kv_dtype_);
  const VkDeviceSize held = (VkDeviceSize)std::min(kv_length_, kv_capacity_) * pos_bytes;  // per (row, head)
  const VkDeviceSize head_stride = (VkDeviceSize)kv_capacity_ * pos_bytes;
  if (held == 0 && n == R) return true;
  CommandRecorder rec(*ctx_);
  rec.begin();
  // Copies row `from` of `a` (heads of `heads`) to row `to` of `b`.
  auto copy_row = [&](const DeviceBuffer& a, int64_t from, const DeviceBuffer& b, int64_t to, int64_t heads) {
    for (int64_t h = 0; h < heads; h++)
      rec.copy(a.slice().sub((VkDeviceSize)(from * heads + h) * head_stride, held),
               b.slice().sub((VkDeviceSize)(to * heads + h) * head_stride, held));
  };
  std::vector<DeviceBuffer> keep;  // buffers the recorded copies read, alive until they ran
  if (n != R) {
    ctx_->wait_idle();
    plans_.clear();  // recorded steps address the old caches
    retired_plan_.reset();
    last_plan_ = nullptr;
    for (KvSlot& s : kv_) {
      const VkDeviceSize bytes = (VkDeviceSize)(n * s.kv_heads) * head_stride;
      std::string name = "kv cache of " + model_->graph.nodes[s.node].name;
      DeviceBuffer k = ctx_->memory().allocate(name + " (key)", bytes);
      DeviceBuffer v = ctx_->memory().allocate(name + " (value)", bytes);
      for (int64_t r = 0; r < n && held > 0; r++) {
        copy_row(s.k, src[r], k, r, s.kv_heads);
        copy_row(s.v, src[r], v, r, s.kv_heads);
      }
      keep.push_back(std::move(s.k));
      keep.push_back(std::move(s.v));
      s.k = std::move(k);
      s.v = std::move(v);
    }
    kv_batch_ = n;
  } else {
    // Rows read by another row and overwritten themselves: saved first.
    std::vector<int64_t> slot(R, -1);
    int64_t saved = 0;
    for (int64_t r = 0; r < n; r++)
      if (src[r] != r && src[src[r]] != src[r] && slot[src[r]] < 0) slot[src[r]] = saved++;
    for (KvSlot& s : kv_) {
      DeviceBuffer scratch;
      if (saved > 0) {
        scratch = ctx_->memory().allocate("kv reorder scratch", (VkDeviceSize)(saved * s.kv_heads) * head_stride * 2);
        for (int64_t r = 0; r < R; r++)
          if (slot[r] >= 0) {
            copy_row(s.k, r, scratch, slot[r], s.kv_heads);
            copy_row(s.v, r, scratch, saved + slot[r], s.kv_heads);
          }
      }
      for (int64_t r = 0; r < n; r++) {
        const int64_t from = src[r];
        if (from == r) continue;
        if (slot[from] >= 0) {
          copy_row(scratch, slot[from], s.k, r, s.kv_heads);
          copy_row(scratch, saved + slot[from], s.v, r, s.kv_heads);
        } else {
          copy_row(s.k, from, s.k, r, s.kv_heads);
          copy_row(s.v, from, s.v, r, s.kv_heads);
        }
      }
      if (saved > 0) keep.push_back(std::move(scratch));
    }
  }
  rec.end();
  rec.run();
  return true;
}

}  // namespace ogx::vk::graph
