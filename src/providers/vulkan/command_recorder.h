// Records a sequence of compute dispatches into one reusable command buffer, inserting a barrier only where a
// dispatch reads or writes a range an earlier, unbarriered dispatch wrote (RAW/WAW) or writes a range one read
// (WAR). A recorded sequence (e.g. a whole decode step) is replayed with one vkQueueSubmit; what changes per step
// lives in small device buffers (positions, sequence lengths) that the host updates between replays.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "providers/vulkan/memory.h"
#include "providers/vulkan/pipeline.h"

namespace ogx::vk {

class Context;

struct RecorderStats {
  uint64_t dispatches = 0;  // recorded in the current sequence
  uint64_t barriers = 0;    // recorded in the current sequence (including the leading one)
  uint64_t submits = 0;     // vkQueueSubmit calls made by this recorder
};

class CommandRecorder {
 public:
  explicit CommandRecorder(Context& ctx);
  ~CommandRecorder();
  CommandRecorder(const CommandRecorder&) = delete;
  CommandRecorder& operator=(const CommandRecorder&) = delete;

  // Starts a new sequence (drops the previous one). The sequence opens with a barrier against earlier submissions.
  void begin();
  // push: at most kPushConstantBytes. reads/writes: every range the dispatch accesses.
  void dispatch(const Pipeline& pipeline, const void* push, uint32_t push_bytes, uint32_t groups_x, uint32_t groups_y,
                uint32_t groups_z, const std::vector<BufferSlice>& reads, const std::vector<BufferSlice>& writes);
  void fill_zero(const BufferSlice& dst);  // a transfer write, tracked like a dispatch write
  // Copies src to dst (same size; e.g. device results into a host-visible readback buffer), tracked like a dispatch.
  void copy(const BufferSlice& src, const BufferSlice& dst);
  // Resets `query` of `pool` and writes a timestamp after all earlier commands (for measurements).
  void write_timestamp(VkQueryPool pool, uint32_t query);
  void end();

  // Submits the recorded sequence (1 vkQueueSubmit) and returns its timeline value; replays when called again.
  uint64_t submit();
  void run();  // submit + wait
  void wait();  // until this recorder's last submission (if any) has completed
  bool recording() const { return recording_; }
  const RecorderStats& stats() const { return stats_; }
  Context& context() { return ctx_; }

 private:
  void access(const std::vector<BufferSlice>& reads, const std::vector<BufferSlice>& writes);
  void barrier(bool full);  // full: also transfers and the host (sequence start and end)

  Context& ctx_;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  bool recording_ = false;
  bool ended_ = false;
  uint64_t last_submit_ = 0;
  std::vector<BufferSlice> pending_writes_;  // written since the last barrier
  std::vector<BufferSlice> pending_reads_;   // read since the last barrier
  RecorderStats stats_;
};

// Rounds up: groups needed to cover n items with `per_group` each.
inline uint32_t div_up(uint64_t n, uint64_t per_group) { return (uint32_t)((n + per_group - 1) / per_group); }

}  // namespace ogx::vk
