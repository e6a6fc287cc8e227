// ogx.NormProjection (fusion.h): a (Skip)SimplifiedLayerNormalization whose normalized output feeds only one
// projection — MatMul / MatMulNBits with constant weights, or ogx.GateUpSiLU — as one node.
//   inputs:  0 x [.., K], 1 skip [.., K] (optional), 2 gamma [K], 3 norm bias [K] (optional),
//            4.. the projection's weight inputs (its inputs 1..)
//   outputs: 0 the projection's output [.., N] (GateUpSiLU: [.., N/2]), 1 residual s = x + skip + bias (optional)
// Decode of one row (activations not quantized to int8): one matvec with the norm as its prologue. Several rows (a
// batched decode step) and prompts: the norm into step scratch, then the projection exactly as the unfused ops
// record it (the skinny matmul for a batch's rows).
#include "providers/vulkan/graph/device_op.h"
#include "providers/vulkan/graph/linear_core.h"
#include "providers/vulkan/kernels/matmul.h"
#include "providers/vulkan/kernels/norm.h"

namespace ogx::vk::graph {
namespace {

constexpr int kWeights = 4;  // first projection input

class NormProjectionOp : public DeviceOp {
 public:
  explicit NormProjectionOp(OpBuildContext& b)
      : node_(b.node),
        kind_(b.node.attr_string("projection", "")),
        gate_up_(kind_ == "GateUpSiLU"),
        nbits_((gate_up_ ? b.node.attr_string("linear", "MatMul") : kind_) == "MatMulNBits"),
        core_(b, nbits_, kWeights),
        eps_(b.node.attr_float("epsilon", 1e-5f)) {
    OGX_CHECK(kind_ == "MatMul" || kind_ == "MatMulNBits" || gate_up_, node_.describe(), ": unknown projection '",
              kind_, "'");
  }
  bool prepares_input(int i) const override { return core_.prepares(i); }
  void infer(const OpArgs& a) override {
    infer_projection(a, node_, core_.K(), gate_up_ ? core_.N() / 2 : core_.N());
    const TensorView& x = *a.in[0];
    if (a.in[1])
      OGX_CHECK(a.in[1]->shape == x.shape, node_.describe(), ": skip ", shape_str(a.in[1]->shape),
                " must match input ", shape_str(x.shape), " on the Vulkan provider");
    if (a.out.size() > 1 && a.out[1]) {
      a.out[1]->dtype = x.dtype;
      a.out[1]->shape = x.shape;
    }
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch& scratch) override {
    const TensorView& x = *a.in[0];
    const TensorView* skip = a.in[1];
    const TensorView* nbias = a.in[3];
    const TensorView& gamma = need_in(a, 2, node_);
    const TensorView* residual = a.out.size() > 1 ? a.out[1] : nullptr;
    int bi = core_.bias_input();
    const TensorView* bias = bi >= 0 && bi < (int)a.in.size() ? a.in[bi] : nullptr;
    int64_t rows = x.numel() / core_.K();
    // The prologue only for one row: each workgroup normalizes every row it reads, so with M rows of a batched step
    // the redundant norm work grows with M (H200, 1B fp16, B=16: 13.7 ms of a 16.3 ms step in this op).
    // int4 weights: tuning q4_norm_prologue (the prologue's per-workgroup norm work against one more dispatch).
    const bool prologue = !nbits_ || rec.context().tuning().q4_norm_prologue != 0;
    if (rows == 1 && prologue && kernels::matvec_fused_applies(rec.context(), rows, gate_up_) &&
        !core_.int8_activations(x.dtype)) {
      kernels::NormPrologue norm{skip, nbias, &gamma, eps_, residual};
      kernels::matvec_fused(rec, x, core_.weight(), bias, &norm, gate_up_, *a.out[0]);
      return;
    }
    TensorView normed{{}, x.dtype, x.shape};
    VkDeviceSize bytes = (VkDeviceSize)normed.numel() * dtype_size(x.dtype);
    normed.mem = scratch.buffer(rec.context(), "normed", std::max<VkDeviceSize>(bytes, 256)).slice().sub(0, bytes);
    if (skip) kernels::skip_rms_norm(rec, x, *skip, nbias, gamma, eps_, normed, residual);
    else kernels::rms_norm(rec, x, gamma, eps_, normed);
    if (gate_up_) record_gate_up_silu(rec, core_, normed, *a.out[0], scratch);
    else core_.record(rec, normed, bias, *a.out[0], scratch);
  }

 private:
  const Node& node_;
  std::string kind_;
  bool gate_up_;
  bool nbits_;  // MatMulNBits weights (int4)
  LinearCore core_;
  float eps_;
};

}  // namespace

void register_fused_ops(std::map<std::pair<std::string, std::string>, OpFactory>& t) {
  t[{"ogx", "NormProjection"}] = [](OpBuildContext& b) { return std::make_unique<NormProjectionOp>(b); };
}

}  // namespace ogx::vk::graph
