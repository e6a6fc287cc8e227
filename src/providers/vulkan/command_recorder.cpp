#include "providers/vulkan/command_recorder.h"

#include <cstring>

#include "providers/vulkan/context.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk {

CommandRecorder::CommandRecorder(Context& ctx) : ctx_(ctx) { cb_ = ctx.allocate_command_buffer(); }

CommandRecorder::~CommandRecorder() {
  if (last_submit_) ctx_.wait(last_submit_);
  ctx_.free_command_buffer(cb_);
  sync_.destroy();
}

void CommandRecorder::begin() {
  if (last_submit_) ctx_.wait(last_submit_);
  OGX_VK(vkResetCommandBuffer(cb_, 0));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  OGX_VK(vkBeginCommandBuffer(cb_, &bi));
  recording_ = true;
  ended_ = false;
  pending_reads_.clear();
  pending_writes_.clear();
  stats_.dispatches = 0;
  stats_.barriers = 0;
  stats_.chained = 0;
  chained_sequence_ = chaining_;
  chained_groups_ = 0;
  if (chained_sequence_) {
    if (!sync_.buffer)
      sync_ = ctx_.memory().create_buffer("dispatch chain counter", 256,
                                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                          VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkCmdFillBuffer(cb_, sync_.buffer, 0, 8, 0);  // count and timed_out, before the barrier below
  }
  barrier(true);  // earlier submissions (uploads, the previous replay) and host writes of step parameters
}

void CommandRecorder::barrier(bool full) {
  if (full) {
    record_full_barrier(cb_);
  } else {
    // Inside a step: device work after device work only (no host stage: host visibility is the end's business).
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                      VK_ACCESS_TRANSFER_WRITE_BIT;
    VkPipelineStageFlags st = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(cb_, st, st, 0, 1, &b, 0, nullptr, 0, nullptr);
  }
  stats_.barriers++;
  pending_reads_.clear();
  pending_writes_.clear();
}

bool CommandRecorder::access(const std::vector<BufferSlice>& reads, const std::vector<BufferSlice>& writes,
                             bool chained) {
  bool hazard = false;
  auto conflict = [&](const BufferSlice& a, const Access& b) { return (!chained || !b.chained) && a.overlaps(b.range); };
  for (const auto& r : reads)
    for (const auto& w : pending_writes_) hazard |= conflict(r, w);
  for (const auto& w : writes) {
    for (const auto& pw : pending_writes_) hazard |= conflict(w, pw);
    for (const auto& pr : pending_reads_) hazard |= conflict(w, pr);
  }
  if (hazard) barrier(false);
  for (const auto& r : reads) pending_reads_.push_back({r, chained});
  for (const auto& w : writes) pending_writes_.push_back({w, chained});
  return hazard;
}

void CommandRecorder::record(const Pipeline& pipeline, const void* push, uint32_t push_bytes, uint32_t gx,
                             uint32_t gy, uint32_t gz) {
  vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  if (push_bytes) vkCmdPushConstants(cb_, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  vkCmdDispatch(cb_, gx, gy, gz);
  stats_.dispatches++;
}

void CommandRecorder::dispatch(const Pipeline& pipeline, const void* push, uint32_t push_bytes, uint32_t gx,
                               uint32_t gy, uint32_t gz, const std::vector<BufferSlice>& reads,
                               const std::vector<BufferSlice>& writes) {
  OGX_CHECK(recording_, "CommandRecorder::dispatch outside begin()/end()");
  OGX_CHECK(push_bytes <= kPushConstantBytes, "push constants of ", pipeline.name, " exceed ", kPushConstantBytes);
  if (gx == 0 || gy == 0 || gz == 0) return;
  access(reads, writes, false);
  record(pipeline, push, push_bytes, gx, gy, gz);
}

void CommandRecorder::dispatch_chainable(const Pipeline& pipeline, const void* push, uint32_t push_bytes,
                                         uint32_t gx, uint32_t gy, uint32_t gz, const std::vector<BufferSlice>& reads,
                                         const std::vector<BufferSlice>& writes) {
  OGX_CHECK(recording_, "CommandRecorder::dispatch outside begin()/end()");
  OGX_CHECK(push_bytes <= kPushConstantBytes && push_bytes >= kChainHeaderBytes, "push constants of ",
            pipeline.name, " must hold the chain header and fit ", kPushConstantBytes, " bytes");
  if (gx == 0 || gy == 0 || gz == 0) return;
  alignas(8) unsigned char bytes[kPushConstantBytes];
  std::memcpy(bytes, push, push_bytes);
  ChainHeader head{0, 0};
  if (chained_sequence_) {
    if (!access(reads, writes, true) && chained_groups_ > 0) stats_.chained++;
    head = {sync_.address, (uint32_t)chained_groups_ | 0x80000000u};
    chained_groups_ += (uint64_t)gx * gy * gz;
    OGX_CHECK(chained_groups_ < (1ull << 31), "a chained sequence of more than 2^31 workgroups");
  } else {
    access(reads, writes, false);
  }
  std::memcpy(bytes, &head.sync, 8);
  std::memcpy(bytes + 8, &head.target_on, 4);
  record(pipeline, bytes, push_bytes, gx, gy, gz);
}

void CommandRecorder::fill_zero(const BufferSlice& dst) {
  OGX_CHECK(recording_, "CommandRecorder::fill_zero outside begin()/end()");
  OGX_CHECK(dst.offset % 4 == 0 && dst.size % 4 == 0, "fill_zero needs 4-byte aligned ranges");
  access({}, {dst}, false);
  vkCmdFillBuffer(cb_, dst.buffer, dst.offset, dst.size, 0);
}

void CommandRecorder::copy(const BufferSlice& src, const BufferSlice& dst) {
  OGX_CHECK(recording_, "CommandRecorder::copy outside begin()/end()");
  OGX_CHECK(src.size == dst.size, "CommandRecorder::copy: sizes differ (", src.size, " vs ", dst.size, ")");
  if (src.size == 0) return;
  access({src}, {dst}, false);
  VkBufferCopy region{src.offset, dst.offset, src.size};
  vkCmdCopyBuffer(cb_, src.buffer, dst.buffer, 1, &region);
}

void CommandRecorder::write_timestamp(VkQueryPool pool, uint32_t query) {
  OGX_CHECK(recording_, "CommandRecorder::write_timestamp outside begin()/end()");
  vkCmdResetQueryPool(cb_, pool, query, 1);
  vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, query);
}

void CommandRecorder::end() {
  OGX_CHECK(recording_, "CommandRecorder::end without begin()");
  barrier(true);  // make results visible to transfers and later submissions
  OGX_VK(vkEndCommandBuffer(cb_));
  recording_ = false;
  ended_ = true;
}

uint64_t CommandRecorder::submit() {
  OGX_CHECK(ended_, "CommandRecorder::submit before end()");
  if (last_submit_) ctx_.wait(last_submit_);  // a command buffer may not be pending twice
  last_submit_ = ctx_.submit(cb_);
  stats_.submits++;
  return last_submit_;
}

void CommandRecorder::run() {
  ctx_.wait(submit());
  if (chained_sequence_) {
    uint32_t timed_out = static_cast<const uint32_t*>(sync_.mapped)[1];
    OGX_CHECK(timed_out == 0, "a chained dispatch waited too long for its predecessors: this device does not run "
              "dispatches in submission order; turn dispatch chaining off (provider option "
              "dispatch_chaining=0) — the results of this step are not valid");
  }
}

}  // namespace ogx::vk
