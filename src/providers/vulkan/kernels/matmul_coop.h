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

}  // namespace ogx::vk::kernels
