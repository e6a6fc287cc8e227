// The weight side of a projection (ONNX MatMul with a constant B, or com.microsoft MatMulNBits), shared by the
// plain ops and the fused ones (norm -> projection, SiLU·Mul -> projection) so every projection uploads and
// multiplies the same way.
#pragma once
#include "providers/vulkan/graph/device_op.h"
#include "providers/vulkan/kernels/matmul.h"

namespace ogx::vk::graph {

class LinearCore {
 public:
  // The weight inputs start at node input b0: MatMul B; MatMulNBits B, scales, zero_points, g_idx, bias. `nbits`
  // selects MatMulNBits, whose attributes (K, N, bits, block_size, accuracy_level) are read from the node.
  LinearCore(OpBuildContext& b, bool nbits, int b0);
  int64_t K() const { return w_.K; }
  int64_t N() const { return w_.N; }
  const kernels::MatMulWeight& weight() const { return w_; }
  bool prepares(int input) const { return input >= b0_ && input < b0_ + (nbits_ ? 4 : 1); }
  int bias_input() const { return has_bias_ ? b0_ + 4 : -1; }
  // MatMulNBits accuracy_level 4 over fp32 activations: A is quantized per block first (ONNX Runtime's CPU rule).
  bool int8_activations(DType x) const { return int8_ && x == DType::f32; }
  // y = x w (+ bias), x [.., K].
  void record(CommandRecorder& rec, const TensorView& x, const TensorView* bias, const TensorView& y,
              StepScratch& scratch) const;

 private:
  kernels::MatMulWeight w_;
  bool nbits_ = false, int8_ = false, has_bias_ = false;
  int b0_ = 1;
};

// Shape inference of a projection node: input 0 [.., K] (checked, naming node n) -> output 0 [.., N] of its dtype.
TensorView& infer_projection(const OpArgs& a, const Node& n, int64_t K, int64_t N);

// ogx.GateUpSiLU's computation over a LinearCore with (gate, up) rows interleaved: y = silu(x Wg) * (x Wu).
// Decode: one matvec with the SiLU·Mul epilogue; prompts: the projection into scratch, then SiLU·Mul of the pairs.
void record_gate_up_silu(CommandRecorder& rec, const LinearCore& core, const TensorView& x, const TensorView& y,
                         StepScratch& scratch);

}  // namespace ogx::vk::graph
