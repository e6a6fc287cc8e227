// Prompt-sized MatMul / MatMulNBits on the GPU's matrix units (shaders/matmul_coop.comp, VK_NV_cooperative_matrix):
// fp16 activations and fp16 or int4 weights, fp32 accumulation. kernels::matmul() takes this path when
// matmul_coop_applies() and falls back to the portable tiled kernel otherwise.
#pragma once
#include "providers/vulkan/kernels/matmul.h"

namespace ogx::vk::kernels {

// True when the context has the fp16 cooperative-matrix kernels (Context::coopmat_f16) and a, w fit them: fp16
// activations, K % 8 == 0, 16-byte aligned rows of a (and of fp16 weights).
bool matmul_coop_applies(const Context& ctx, const TensorView& a, const MatMulWeight& w);

// c[M, N] = a[M, K] x w (+ bias [N]) for any M; a, c, bias fp16. Requires matmul_coop_applies.
void matmul_coop(CommandRecorder& rec, const TensorView& a, const MatMulWeight& w, const TensorView* bias,
                 const TensorView& c);

// The skinny variant (shaders/matvec_coop.comp) for a batched decode step of 2..64 rows: the rows fill up to four
// 16-row fragments, so the step reads the weights once. True when the context has the fp16 cooperative-matrix
// kernels, M <= the tuning row's coop_skinny_max_m (at most kCoopSkinnyMaxM) and x (M rows) is fp16 with K % 8 == 0,
// 16-byte aligned (fp16 weights too); for M > 32 only where the prompt kernel would get fewer than the tuning row's
// coop_tiled_min_groups workgroups.
constexpr int64_t kCoopSkinnyMaxM = 64;
bool matvec_coop_applies(const Context& ctx, const TensorView& x, const MatMulWeight& w, int64_t M);

// The skinny kernel's specialization for M rows on this context: the tuning row's threads / unroll / column tiles
// (int4 with one row tile: one column tile), reduced until its shared memory fits (48 KiB at most).
struct CoopSkinnyShape {
  uint32_t threads = 256, unroll = 4, col_tiles = 1, row_tiles = 1, direct_w = 0;
  uint32_t pad = 1;  // staged rows padded against shared-memory bank conflicts (dropped first when memory is short)
};
CoopSkinnyShape coop_skinny_shape(const Context& ctx, int64_t M, bool int4);

// y[M, N] = x[M, K] x w (+ bias [N]); with silu_pairs (interleaved gate/up rows) y[M, N / 2] = silu(gate) * up.
// Requires matvec_coop_applies.
void matvec_coop(CommandRecorder& rec, const TensorView& x, const MatMulWeight& w, const TensorView* bias,
                 bool silu_pairs, const TensorView& y);

}  // namespace ogx::vk::kernels
