// The Vulkan provider's Session: runs an ONNX decoder graph on one Vulkan device.
//
// At creation the graph is split three ways: nodes over constants are folded on the host once; the shape
// arithmetic over host inputs (attention_mask -> seqlens_k / total_sequence_length, ...) stays on the host with the
// CPU kernels; everything else becomes a DeviceOp with its weights uploaded (once, through the bounded upload heap).
// The KV cache lives on the device in a paged pool (graph/kv_pool.h): each generator owns a KvState of blocks from
// it (Session::decoder(), exec/decode_session.h), bound to both GroupQueryAttention's past inputs and present outputs
// whatever the folder's past_present_share_buffer says, so the caller passes no past/present tensors. A run names
// the states whose rows it holds; their block table is a step value, so generators interleave freely and several
// decode in one run (genai/batch_step.h).
//
// Each run is described by a signature (batch, block-table width, shapes of the per-step host values, requested
// outputs).
// The first run of a signature records every dispatch into one command buffer (a "plan", with its activation
// buffers reused by liveness); later runs of the same signature — every decode step — only write the step values
// (token ids, positions, lengths) into host-visible buffers and replay it: one vkQueueSubmit per run.
#pragma once
#include <map>
#include <memory>

#include "exec/session.h"

namespace ogx::vk {

// Provider options: the device keys of parse_provider_options (device_id, performance_preference,
// hardware_device_type, ...), enable_graph_capture ("0": record every run), and enable_validation ("1": Khronos
// validation + synchronization validation; any message is counted, see Instance), enable_profiling ("1": GPU time per
// op type), step_values_in_place ("0": copy the per-step values into device memory at each step's start instead
// of letting kernels read them from device-local host-visible memory), enable_cpu_fallback ("0": a node without a
// device op is a load-time error instead of running on the CPU provider; OGX_STRICT_PROVIDER=1 in the environment
// makes "0" the default), cpu_ops ("Op,Op": op types placed on the CPU provider as if the device lacked them) and
// kv_cache_budget_mb (the most device memory the KV pool takes, MiB; default 0: until the device runs out).
std::unique_ptr<Session> create_vulkan_session(std::shared_ptr<const Model> model, const SessionOptions& opts);

}  // namespace ogx::vk
