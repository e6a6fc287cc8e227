#include "providers/vulkan/kernels/rotary.h"

#include "providers/vulkan/kernels/kernel_util.h"

namespace ogx::vk::kernels {

void rotary_embedding(CommandRecorder& rec, const RotaryParams& params, const TensorView& x,
                      const TensorView& position_ids, const TensorView& cos_cache, const TensorView& sin_cache,
                      const TensorView& out) {
  const char* t = storage_suffix(x.dtype, "RotaryEmbedding");
  check_same_dtype(x, out, "RotaryEmbedding");
  check_same_dtype(x, cos_cache, "RotaryEmbedding cos_cache");
  check_same_dtype(x, sin_cache, "RotaryEmbedding sin_cache");
  OGX_CHECK(position_ids.dtype == DType::i64, "RotaryEmbedding: position_ids must be int64");
  OGX_CHECK(x.shape.size() == 3 || x.shape.size() == 4, "RotaryEmbedding: input must be 3-D or 4-D, got ",
            shape_str(x.shape));
  OGX_CHECK(!x.mem.overlaps(out.mem), "RotaryEmbedding: output must not alias the input");
  int64_t half = cos_cache.shape.back(), rot = params.rotary_dim ? params.rotary_dim : 2 * half;
  int64_t B = x.shape[0], S, H, D;
  uint32_t sb, ss, sh;
  if (x.shape.size() == 4) {
    H = x.shape[1], S = x.shape[2], D = x.shape[3];
    sb = (uint32_t)(H * S * D), sh = (uint32_t)(S * D), ss = (uint32_t)D;
  } else {
    S = x.shape[1];
    H = params.num_heads ? params.num_heads : x.shape[2] / rot;
    D = x.shape[2] / H;
    sb = (uint32_t)(S * H * D), ss = (uint32_t)(H * D), sh = (uint32_t)D;
  }
  OGX_CHECK(H * D == (x.shape.size() == 4 ? H * x.shape[3] : x.shape[2]) && rot <= D && rot % 2 == 0 &&
                half * 2 == rot,
            "RotaryEmbedding: heads ", H, " x head size ", D, " and rotary dim ", rot, " do not fit ",
            shape_str(x.shape), " with cos_cache ", shape_str(cos_cache.shape));
  uint32_t pos_mode = position_ids.numel() == 1 ? 1 : 0;
  OGX_CHECK(pos_mode == 1 || position_ids.numel() == B * S, "RotaryEmbedding: position_ids ",
            shape_str(position_ids.shape), " must be [B, S] or [1]");
  struct {
    uint64_t x, pos, cos_c, sin_c, out;
    uint32_t B, S, H, D, rot_dim, interleaved, pos_mode, max_pos, stride_b, stride_s, stride_h;
  } p{addr(x), addr(position_ids), addr(cos_cache), addr(sin_cache), addr(out), (uint32_t)B, (uint32_t)S,
      (uint32_t)H, (uint32_t)D, (uint32_t)rot, params.interleaved, pos_mode, (uint32_t)cos_cache.shape[0], sb, ss,
      sh};
  const Pipeline& pl = rec.context().pipelines().get(std::string("rotary_") + t);
  uint32_t gx, gy;
  grid_2d(div_up(x.numel(), 256), &gx, &gy);
  rec.dispatch(pl, &p, sizeof(p), gx, gy, 1, {x.mem, position_ids.mem, cos_cache.mem, sin_cache.mem}, {out.mem});
}

}  // namespace ogx::vk::kernels
