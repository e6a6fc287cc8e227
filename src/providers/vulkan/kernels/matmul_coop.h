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

// The skinny variant (shaders/matvec_coop.comp) for a batched decode step of 2..16 rows: the rows fill one 16-row
// fragment, so the step reads the weights once at the cost of one row. True when the context has the fp16
// cooperative-matrix kernels and x (M rows) is fp16 with K % 8 == 0, 16-byte aligned (fp16 weights too).
bool matvec_coop_applies(const Context& ctx, const TensorView& x, const MatMulWeight& w, int64_t M);

// y[M, N] = x[M, K] x w (+ bias [N]); with silu_pairs (interleaved gate/up rows) y[M, N / 2] = silu(gate) * up.
// Requires matvec_coop_applies.
void matvec_coop(CommandRecorder& rec, const TensorView& x, const MatMulWeight& w, const TensorView* bias,
                 bool silu_pairs, const TensorView& y);

}  // namespace ogx::vk::kernels
