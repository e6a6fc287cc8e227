// com.microsoft RotaryEmbedding: input [B,S,hidden] or [B,N,S,H], position_ids [B,S] (or [1] as an offset),
// cos_cache/sin_cache [max_position, rotary_dim/2]. Head size: H of a 4-D input, hidden/num_heads of a 3-D one, or
// the cache width x 2 when a 3-D input comes without num_heads. rotary_embedding_dim (needs num_heads for 3-D input)
// rotates the first rot dims and copies the rest. Computed in fp32, stored in the input's type.
#include <vector>

#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/rotary.h"
#include "providers/cpu/type_dispatch.h"

namespace ogx::cpu {
namespace {

void rotary_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& pos = ctx.input(1);
  const Tensor& cosc = ctx.input(2);
  const Tensor& sinc = ctx.input(3);
  const Node& n = ctx.node();
  OGX_CHECK(x.rank() == 3 || x.rank() == 4, n.describe(), ": input must be 3-D or 4-D, got ", shape_str(x.shape()));
  OGX_CHECK(cosc.rank() == 2 && cosc.shape() == sinc.shape(), n.describe(), ": cos/sin caches must be equal 2-D");
  bool interleaved = n.attr_int("interleaved", 0) != 0;
  // `scale` is accepted and, as in ONNX Runtime, not applied: it only describes how the cos/sin caches were built
  // (ONNX Runtime would use it to extend them, which it does not implement either).
  int64_t B = x.dim(0), S, N, H;
  bool bnsh = x.rank() == 4;
  int64_t half = cosc.dim(1), max_pos = cosc.dim(0);
  int64_t rot = n.attr_int("rotary_embedding_dim", 0);
  if (bnsh) {
    N = x.dim(1);
    S = x.dim(2);
    H = x.dim(3);
  } else {
    S = x.dim(1);
    int64_t num_heads = n.attr_int("num_heads", 0);
    H = num_heads > 0 ? x.dim(2) / num_heads : (rot > 0 ? 0 : half * 2);
    if (H == 0) throw_error(n.describe(), ": num_heads is required with rotary_embedding_dim");
    N = x.dim(2) / H;
    OGX_CHECK(N * H == x.dim(2), n.describe(), ": hidden size ", x.dim(2), " is not a multiple of head size ", H);
  }
  if (rot == 0) rot = H;
  OGX_CHECK(rot <= H && rot == half * 2, n.describe(), ": rotary dim ", rot, " does not match cache width ", half);
  bool offset_mode = pos.numel() == 1 && !(B == 1 && S == 1 && pos.rank() == 2);
  OGX_CHECK(offset_mode || pos.numel() == B * S, n.describe(), ": position_ids shape ", shape_str(pos.shape()),
            " does not fit batch ", B, " and sequence ", S);
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  dispatch_float(x.dtype(), "RotaryEmbedding", [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<float> head(H), cs(half), sn(half);
    for (int64_t b = 0; b < B; b++)
      for (int64_t s = 0; s < S; s++) {
        int64_t p = offset_mode ? pos.get_i64(0) + s : pos.get_i64(b * S + s);
        OGX_CHECK(p >= 0 && p < max_pos, n.describe(), ": position ", p, " outside the cos/sin cache (", max_pos, ")");
        for (int64_t i = 0; i < half; i++) {
          cs[i] = (float)cosc.get_f64(p * half + i);
          sn[i] = (float)sinc.get_f64(p * half + i);
        }
        for (int64_t h = 0; h < N; h++) {
          int64_t off = bnsh ? ((b * N + h) * S + s) * H : (b * S + s) * N * H + h * H;
          const T* src = x.data<T>() + off;
          T* dst = y.data<T>() + off;
          for (int64_t i = 0; i < H; i++) head[i] = (float)load(src[i]);
          rotate_head(head.data(), rot, cs.data(), sn.data(), interleaved);
          for (int64_t i = 0; i < H; i++) dst[i] = store<T>(head[i]);
        }
      }
  });
}

}  // namespace

void register_rotary(KernelRegistry& r) { r.add_fn("com.microsoft", "RotaryEmbedding", rotary_kernel); }

}  // namespace ogx::cpu
