// Records a sequence of compute dispatches into one reusable command buffer, inserting a barrier only where a
// dispatch reads or writes a range an earlier, unbarriered dispatch wrote (RAW/WAW) or writes a range one read
// (WAR). A recorded sequence (e.g. a whole decode step) is replayed with one vkQueueSubmit; what changes per step
// lives in small device buffers (positions, sequence lengths) that the host updates between replays.
//
// Chaining (set_chaining): a dispatch recorded with dispatch_chainable that depends only on earlier chainable
// dispatches gets no barrier; its workgroups wait on a device counter instead (shaders/chain.glsl), so the GPU
// does not drain between dependent kernels and a kernel's weight loads overlap its producer's tail. Every
// chainable dispatch of a chained sequence waits for all earlier ones (a total order: the counter then proves
// completion); dispatches and transfers that do not take part still get barriers where a hazard needs one.
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
  uint64_t chained = 0;     // dispatches of the current sequence ordered by the chain counter instead of a barrier
  uint64_t submits = 0;     // vkQueueSubmit calls made by this recorder
};

// The first 12 bytes of a chainable kernel's push constants (chain.glsl), which dispatch_chainable fills in: the
// device address of the sequence's {count, timed_out}, then the count to wait for with bit 31 set when chaining
// is on (a plain dispatch: both 0). A kernel's push struct declares them as its first two fields.
struct ChainHeader {
  uint64_t sync;
  uint32_t target_on;
};
constexpr uint32_t kChainHeaderBytes = 12;

class CommandRecorder {
 public:
  explicit CommandRecorder(Context& ctx);
  ~CommandRecorder();
  CommandRecorder(const CommandRecorder&) = delete;
  CommandRecorder& operator=(const CommandRecorder&) = delete;

  // Chaining of the sequences begun from now on (see above); off by default.
  void set_chaining(bool on) { chaining_ = on; }
  bool chaining() const { return chaining_; }
  // Starts a new sequence (drops the previous one). The sequence opens with a barrier against earlier submissions.
  void begin();
  // push: at most kPushConstantBytes. reads/writes: every range the dispatch accesses.
  void dispatch(const Pipeline& pipeline, const void* push, uint32_t push_bytes, uint32_t groups_x, uint32_t groups_y,
                uint32_t groups_z, const std::vector<BufferSlice>& reads, const std::vector<BufferSlice>& writes);
  // A dispatch of a chainable kernel: push starts with the chain header, which this fills in (a copy is recorded).
  void dispatch_chainable(const Pipeline& pipeline, const void* push, uint32_t push_bytes, uint32_t groups_x,
                          uint32_t groups_y, uint32_t groups_z, const std::vector<BufferSlice>& reads,
                          const std::vector<BufferSlice>& writes);
  void fill_zero(const BufferSlice& dst);  // a transfer write, tracked like a dispatch write
  // Copies src to dst (same size; e.g. device results into a host-visible readback buffer), tracked like a dispatch.
  void copy(const BufferSlice& src, const BufferSlice& dst);
  // Resets `query` of `pool` and writes a timestamp after all earlier commands (for measurements).
  void write_timestamp(VkQueryPool pool, uint32_t query);
  void end();

  // Submits the recorded sequence (1 vkQueueSubmit) and returns its timeline value; replays when called again.
  uint64_t submit();
  // Submit + wait. A chained sequence whose wait gave up (the device did not run a dispatch's predecessors): an
  // ogx::Error saying so; the results of that replay are not valid.
  void run();
  bool recording() const { return recording_; }
  const RecorderStats& stats() const { return stats_; }
  Context& context() { return ctx_; }

 private:
  struct Access {
    BufferSlice range;
    bool chained;  // by a chained dispatch (ordered by the counter, no barrier needed against it)
  };
  // Records a barrier when the access conflicts with a pending one (for a chained dispatch: with a pending one not
  // made by a chained dispatch); returns whether one was recorded.
  bool access(const std::vector<BufferSlice>& reads, const std::vector<BufferSlice>& writes, bool chained);
  void barrier(bool full);  // full: also transfers and the host (sequence start and end)
  void record(const Pipeline& pipeline, const void* push, uint32_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz);

  Context& ctx_;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  bool recording_ = false;
  bool ended_ = false;
  uint64_t last_submit_ = 0;
  std::vector<Access> pending_writes_;  // written since the last barrier
  std::vector<Access> pending_reads_;   // read since the last barrier
  RecorderStats stats_;
  bool chaining_ = false;
  bool chained_sequence_ = false;  // the recorded sequence uses the counter
  uint64_t chained_groups_ = 0;    // workgroups of the chained dispatches recorded so far in the sequence
  RawBuffer sync_;                 // {count, timed_out}: device-local and host-visible where the device has it
};

// Rounds up: groups needed to cover n items with `per_group` each.
inline uint32_t div_up(uint64_t n, uint64_t per_group) { return (uint32_t)((n + per_group - 1) / per_group); }

}  // namespace ogx::vk
