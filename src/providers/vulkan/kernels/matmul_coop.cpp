#include "providers/vulkan/kernels/matmul_coop.h"

#include <algorithm>

#include "providers/vulkan/kernels/kernel_util.h"

namespace ogx::vk::kernels {

namespace {

struct CoopPush {
  uint64_t a, w, scales, zp, bias, c;
  uint32_t M, N, K, block_size, nblocks, zp_stride, has_zp, has_bias;
};
static_assert(sizeof(CoopPush) <= kPushConstantBytes);

// The push constants of both shaders for a[M, K] x w (+ bias) -> c.
CoopPush coop_push(const TensorView& a, const MatMulWeight& w, const TensorView* bias, const TensorView& c,
                   int64_t M) {
  return CoopPush{addr(a), w.data.slice().address, w.int4 ? w.scales.slice().address : 0,
                  w.has_zero_points ? w.zero_points.slice().address : 0, addr_or_zero(bias), addr(c), (uint32_t)M,
                  (uint32_t)w.N, (uint32_t)w.K, (uint32_t)w.block_size, (uint32_t)w.nblocks,
                  (uint32_t)((w.nblocks + 1) / 2), w.has_zero_points, bias != nullptr};
}

using CoopTile = Tuning::CoopTile;
uint32_t tile_m(const CoopTile& t) { return t.warps_m * t.frags_m * 16; }
uint32_t tile_n(const CoopTile& t) { return t.warps_n * t.frags_n * 16; }
uint32_t tile_threads(const CoopTile& t) { return t.warps_m * t.warps_n * 32; }

// Shared memory of matmul_coop.comp for a tile: its staged buffers, or the epilogue's fp16 fragment per subgroup.
uint32_t tile_shared_bytes(const CoopTile& t) {
  uint32_t staged = t.stages * (tile_m(t) + tile_n(t)) * (t.k_step / 8 + 1) * 16;
  return std::max(staged, t.warps_m * t.warps_n * 512);
}

// The shader's constraints on a tile shape (each thread stages whole 16-byte pieces, int4 16-value pieces) and the
// device's limits.
bool tile_fits(const Context& ctx, const CoopTile& t) {
  const uint32_t nt = tile_threads(t);
  if ((t.k_step != 32 && t.k_step != 64) || (t.stages != 1 && t.stages != 2) || t.frags_m == 0 || t.frags_n == 0)
    return false;
  if (nt > ctx.info().max_workgroup_invocations || tile_shared_bytes(t) > ctx.info().max_shared_memory) return false;
  return (tile_m(t) * t.k_step / 8) % nt == 0 && (tile_n(t) * t.k_step / 8) % nt == 0 &&
         (tile_n(t) * t.k_step / 16) % nt == 0;
}

}  // namespace

bool matmul_coop_applies(const Context& ctx, const TensorView& a, const MatMulWeight& w) {
  if (!ctx.coopmat_f16() || a.dtype != DType::f16 || w.dtype != DType::f16 || w.K % 8 != 0) return false;
  if (!tile_fits(ctx, ctx.tuning().coop_small_tile)) return false;
  if (a.mem.address % 16 != 0) return false;
  return w.int4 ? w.data.slice().address % 4 == 0 : w.data.slice().address % 16 == 0;
}

void matmul_coop(CommandRecorder& rec, const TensorView& a, const MatMulWeight& w, const TensorView* bias,
                 const TensorView& c) {
  Context& ctx = rec.context();
  OGX_CHECK(matmul_coop_applies(ctx, a, w), "matmul_coop: the device or the operands do not fit the cooperative-",
            "matrix kernel (fp16, K % 8 == 0, 16-byte aligned)");
  const int64_t M = a.numel() / w.K;
  OGX_CHECK(a.shape.back() == w.K && c.numel() == M * w.N && c.dtype == DType::f16, "matmul_coop: shapes ",
            shape_str(a.shape), " x [", w.K, ",", w.N, "] -> ", shape_str(c.shape), " do not agree");
  if (bias) OGX_CHECK(bias->numel() == w.N && bias->dtype == DType::f16, "matmul_coop: bias must be fp16 [", w.N, "]");
  const Tuning& tu = ctx.tuning();
  // The big tile reads each operand less often; it is used when it still gives the GPU enough workgroups.
  const CoopTile& big = w.int4 ? tu.coop_big_tile_q4 : tu.coop_big_tile;
  const bool use_big = tile_fits(ctx, big) && (uint64_t)div_up((uint64_t)M, (uint64_t)tile_m(big)) *
                                                      div_up((uint64_t)w.N, (uint64_t)tile_n(big)) >=
                                                  tu.coop_big_tile_min_groups;
  const CoopTile& t = use_big ? big : tu.coop_small_tile;
  OGX_CHECK(div_up((uint64_t)M, (uint64_t)tile_m(t)) <= 65535 && div_up((uint64_t)w.N, (uint64_t)tile_n(t)) <= 65535,
            "matmul_coop: ", M, " x ", w.N, " outputs exceed the dispatch grid");
  const Pipeline& pl = ctx.pipelines().get(w.int4 ? "matmul_coop_q4_f16" : "matmul_coop_f16",
                                           {tile_threads(t), t.warps_m, t.warps_n, t.frags_m, t.frags_n, t.k_step,
                                            t.stages});
  CoopPush p = coop_push(a, w, bias, c, M);
  rec.dispatch(pl, &p, sizeof(p), div_up((uint32_t)w.N, tile_n(t)), div_up((uint32_t)M, tile_m(t)), 1,
               projection_reads(a, w, bias), {c.mem});
}

bool matvec_coop_applies(const Context& ctx, const TensorView& x, const MatMulWeight& w, int64_t M) {
  if (!ctx.coopmat_f16() || x.dtype != DType::f16 || w.dtype != DType::f16 || w.K % 8 != 0) return false;
  const int64_t max_m = std::min<int64_t>(ctx.tuning().coop_skinny_max_m, kCoopSkinnyMaxM);
  if (M < 2 || M > max_m || x.mem.address % 16 != 0) return false;
  // Above two row tiles the prompt kernel is faster where N gives it enough 64 x 64 tiles (H200, M = 64: the 8B's
  // gate/up 200 vs 268 us; its down projection, 64 tiles, 253 vs 131 us).
  if (M > 32 && matmul_coop_applies(ctx, x, w) &&
      (uint64_t)div_up((uint32_t)w.N, tile_n(ctx.tuning().coop_small_tile)) *
              div_up((uint32_t)M, tile_m(ctx.tuning().coop_small_tile)) >=
          ctx.tuning().coop_tiled_min_groups)
    return false;
  if (w.int4) return w.block_size % 8 == 0 && w.data.slice().address % 4 == 0;
  return w.data.slice().address % 16 == 0;
}

CoopSkinnyShape coop_skinny_shape(const Context& ctx, int64_t M, bool int4) {
  const Tuning& tu = ctx.tuning();
  CoopSkinnyShape k;
  k.row_tiles = (uint32_t)div_up((uint32_t)M, 16u);
  k.threads = std::clamp<uint32_t>(tu.coop_skinny_threads / 32 * 32, 32, 512);
  k.unroll = std::clamp<uint32_t>(tu.coop_skinny_unroll, 1, 8);
  k.col_tiles = std::clamp<uint32_t>(int4 && k.row_tiles == 1 ? 1 : tu.coop_skinny_cols, 1, 8);
  // Shared memory: staged x and W pieces of every subgroup, plus one fp32 16 x 16 fragment per subgroup.
  const uint32_t limit = std::min<uint32_t>(ctx.info().max_shared_memory, 48 * 1024);
  k.direct_w = !int4 && tu.coop_skinny_direct_w != 0;  // direct: no weight slots in shared memory
  k.pad = int4 ? 0 : 1;  // int4 stages per K step, conflict-free without padding (matvec_coop.comp)
  auto bytes = [&] {  // per subgroup: (RT + CT) tiles of 16 rows x stride pieces of 16 bytes (matvec_coop.comp)
    uint32_t stride = 2 * k.unroll + (k.unroll > 1 && k.pad ? 2 : 0);
    return k.threads / 32 * ((k.row_tiles + k.col_tiles) * 256 * stride + 1024);
  };
  // What does not fit drops the padding, then halves the unroll (padded again), and so on: H200, 8B shapes, M = 16
  // at unroll 2: padded 211 us for the four projections, unpadded 223, before the lanes read whole rows 245.
  while (bytes() > limit && k.unroll > 1) {
    if (k.pad) {
      k.pad = 0;
    } else {
      k.unroll /= 2;
      k.pad = int4 ? 0 : 1;
    }
  }
  while (bytes() > limit && k.col_tiles > 1) k.col_tiles /= 2;
  while (bytes() > limit && k.threads > 32) k.threads /= 2;
  return k;
}

void matvec_coop(CommandRecorder& rec, const TensorView& x, const MatMulWeight& w, const TensorView* bias,
                 bool silu_pairs, const TensorView& y) {
  Context& ctx = rec.context();
  int64_t M = x.numel() / w.K;
  OGX_CHECK(matvec_coop_applies(ctx, x, w, M), "matvec_coop: the device or the operands do not fit the ",
            "cooperative-matrix skinny kernel (fp16, 2..", kCoopSkinnyMaxM, " rows, K % 8 == 0, 16-byte aligned)");
  OGX_CHECK(!silu_pairs || (w.N % 2 == 0 && !bias), "matvec_coop: the gate/up SiLU variant needs an even N, no bias");
  if (bias) OGX_CHECK(bias->numel() == w.N && bias->dtype == DType::f16, "matvec_coop: bias must be fp16 [", w.N, "]");
  OGX_CHECK(y.numel() == M * (silu_pairs ? w.N / 2 : w.N) && y.dtype == DType::f16, "matvec_coop: output ",
            shape_str(y.shape), " does not fit ", M, " rows of ", w.N, silu_pairs ? " gate/up columns" : " columns");
  const CoopSkinnyShape k = coop_skinny_shape(ctx, M, w.int4);
  std::string shader = std::string(w.int4 ? "matvec_coop_q4_f16" : "matvec_coop_f16") + (silu_pairs ? "_silu" : "");
  const Pipeline& pl = ctx.pipelines().get(shader, {k.threads, k.unroll, k.col_tiles, k.row_tiles, k.direct_w, k.pad});
  CoopPush p = coop_push(x, w, bias, y, M);  // int4 without zero points: has_zp 0, the address is not read
  uint32_t gx, gz;
  grid_2d(div_up((uint32_t)w.N, 16u * k.col_tiles), &gx, &gz);
  rec.dispatch(pl, &p, sizeof(p), gx, 1, gz, projection_reads(x, w, bias), {y.mem});
}

}  // namespace ogx::vk::kernels
