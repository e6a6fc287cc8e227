// com.microsoft GroupQueryAttention on the device, with the KV cache shared between past and present
// (past_present_share_buffer) and paged: new keys/values are written in place into the blocks of a per-row block
// table (graph/kv_pool.h; the layout in shaders/attention_common.glsl).
// Decode (S == 1) uses flash-decoding (split over the KV length + combine); prompts use a causal tiled kernel.
// Sequence lengths come from device tensors (seqlens_k, total_sequence_length) so recorded steps replay.
#pragma once
#include <string>
#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"

namespace ogx::vk::kernels {

struct GqaParams {
  int64_t num_heads = 0;     // Hq
  int64_t kv_num_heads = 0;  // Hkv; Hq / Hkv is the group size (1, 2, 4, ...)
  float scale = 0.0f;        // 0: 1 / sqrt(D)
  float softcap = 0.0f;      // 0: off
  int64_t local_window_size = -1;
  bool do_rotary = false;
  bool rotary_interleaved = false;
};

// One layer's paged KV cache: each (row, KV head)'s blocks of kKvBlock positions, by device address.
constexpr int64_t kKvBlock = 16;  // KV_BLOCK of shaders/attention_common.glsl
struct KvPages {
  BufferSlice table;              // uint64 [B, Hkv, max_seq / kKvBlock]: device address of each block
  uint32_t k_off = 0, v_off = 0;  // elements into a block of this layer's keys / values ([kKvBlock, D] each)
};

struct GqaTensors {
  TensorView query;                  // [B, S, Hq*D], or packed QKV [B, S, (Hq + 2 Hkv) * D] when key is null
  const TensorView* key = nullptr;   // [B, S, Hkv*D]
  const TensorView* value = nullptr; // [B, S, Hkv*D]
  // [B, Hkv, max_seq, D] in `pages`: dtype and shape; mem orders this layer's cache accesses (hazard tracking)
  TensorView k_cache, v_cache;
  KvPages pages;
  TensorView seqlens_k;              // int32 [B]: valid keys - 1 per batch row
  TensorView total_sequence_length;  // int32 [1]
  const TensorView* cos_cache = nullptr;  // [max_pos, D/2] when do_rotary
  const TensorView* sin_cache = nullptr;
  const TensorView* position_ids = nullptr;  // int64 [B, S]: rotary positions (else past + s)
  TensorView output;                 // [B, S, Hq*D]
};

// Scratch for one attention call shape; reusable across layers and steps.
struct GqaWorkspace {
  DeviceBuffer q_rotated;  // f32 [B, Hq, S_max, D]
  DeviceBuffer partials;   // f32 [B * S_max, Hq, max(nsplit, group_nsplit, chunks), D + 2]
  DeviceBuffer counters;   // u32 [B, Hq], zero between steps: finished splits of the one-dispatch decode
  int64_t nsplit = 1;        // splits of the two-dispatch flash-decoding
  int64_t group_nsplit = 1;  // splits (workgroups per KV head) of gqa_decode_group.comp
};
GqaWorkspace make_gqa_workspace(Context& ctx, int64_t B, int64_t S_max, int64_t Hq, int64_t D, int64_t max_seq);
// The workspace for these dimensions taking over `old`'s buffers where they are large enough (a longer cache often
// needs only other split counts: prompt chunks of one size at growing KV capacities); `old` keeps those it gives none.
GqaWorkspace regrow_gqa_workspace(Context& ctx, GqaWorkspace& old, int64_t B, int64_t S_max, int64_t Hq, int64_t D,
                                  int64_t max_seq);

// Pages over contiguous caches [B, Hkv, max_seq, D] (kernel tests and benchmarks): a table in `table_storage`
// addressing their rows in place.
KvPages contiguous_kv_pages(Context& ctx, const TensorView& k_cache, const TensorView& v_cache,
                            DeviceBuffer& table_storage);

void group_query_attention(CommandRecorder& rec, const GqaParams& params, const GqaTensors& t, GqaWorkspace& ws);

// How one new token per row attends over a block table of max_seq positions (benchmarks and logs): "N key chunks"
// (gqa_decode_chunk.comp, N per row and KV head part) or "N splits" (gqa_decode_group.comp, up to N per KV head).
std::string describe_decode_attention(const Context& ctx, const GqaWorkspace& ws, int64_t B, int64_t Hq, int64_t Hkv,
                                      int64_t D, int64_t max_seq);
// Whether S query rows per sequence (S = 1: one new token; a few rows: a verify pass) take the key chunks.
bool takes_key_chunks(const Context& ctx, const GqaWorkspace& ws, int64_t B, int64_t S, int64_t Hq, int64_t Hkv,
                      int64_t D, int64_t max_seq);

}  // namespace ogx::vk::kernels
