#include "providers/vulkan/command_recorder.h"

#include "providers/vulkan/context.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk {

CommandRecorder::CommandRecorder(Context& ctx) : ctx_(ctx) { cb_ = ctx.allocate_command_buffer(); }

CommandRecorder::~CommandRecorder() {
  if (last_submit_) ctx_.wait_for_teardown(last_submit_);
  ctx_.free_command_buffer(cb_);
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

void CommandRecorder::access(const std::vector<BufferSlice>& reads, const std::vector<BufferSlice>& writes) {
  bool hazard = false;
  for (const auto& r : reads)
    for (const auto& w : pending_writes_) hazard |= r.overlaps(w);
  for (const auto& w : writes) {
    for (const auto& pw : pending_writes_) hazard |= w.overlaps(pw);
    for (const auto& pr : pending_reads_) hazard |= w.overlaps(pr);
  }
  if (hazard) barrier(false);
  pending_reads_.insert(pending_reads_.end(), reads.begin(), reads.end());
  pending_writes_.insert(pending_writes_.end(), writes.begin(), writes.end());
}

void CommandRecorder::dispatch(const Pipeline& pipeline, const void* push, uint32_t push_bytes, uint32_t gx,
                               uint32_t gy, uint32_t gz, const std::vector<BufferSlice>& reads,
                               const std::vector<BufferSlice>& writes) {
  OGX_CHECK(recording_, "CommandRecorder::dispatch outside begin()/end()");
  OGX_CHECK(push_bytes <= kPushConstantBytes, "push constants of ", pipeline.name, " exceed ", kPushConstantBytes);
  if (gx == 0 || gy == 0 || gz == 0) return;
  access(reads, writes);
  vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  if (push_bytes) vkCmdPushConstants(cb_, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  vkCmdDispatch(cb_, gx, gy, gz);
  stats_.dispatches++;
}

void CommandRecorder::fill_zero(const BufferSlice& dst) {
  OGX_CHECK(recording_, "CommandRecorder::fill_zero outside begin()/end()");
  OGX_CHECK(dst.offset % 4 == 0 && dst.size % 4 == 0, "fill_zero needs 4-byte aligned ranges");
  access({}, {dst});
  vkCmdFillBuffer(cb_, dst.buffer, dst.offset, dst.size, 0);
}

void CommandRecorder::copy(const BufferSlice& src, const BufferSlice& dst) {
  OGX_CHECK(recording_, "CommandRecorder::copy outside begin()/end()");
  OGX_CHECK(src.size == dst.size, "CommandRecorder::copy: sizes differ (", src.size, " vs ", dst.size, ")");
  if (src.size == 0) return;
  access({src}, {dst});
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

void CommandRecorder::run() { ctx_.wait(submit()); }

void CommandRecorder::wait() {
  if (last_submit_) ctx_.wait(last_submit_);
}

}  // namespace ogx::vk
