// com.microsoft RotaryEmbedding on the device.
#pragma once
#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"

namespace ogx::vk::kernels {

struct RotaryParams {
  bool interleaved = false;
  int64_t num_heads = 0;      // needed for 3-D input when rotary_dim < head size; 0: derived from rotary_dim / caches
  int64_t rotary_dim = 0;     // 0: the whole head (2 * cos_cache.shape[1])
};

// x: [B, S, H*D] or [B, H, S, D]; position_ids: int64 [B, S] or [1] (offset); cos/sin: [max_pos, rotary_dim/2];
// out: like x (must not alias x).
void rotary_embedding(CommandRecorder& rec, const RotaryParams& params, const TensorView& x,
                      const TensorView& position_ids, const TensorView& cos_cache, const TensorView& sin_cache,
                      const TensorView& out);

}  // namespace ogx::vk::kernels
