// Ops made by the fusion rewrites (fusion.h): ogx.NormLinear (RMSNorm or SkipRMSNorm feeding one projection) and
// ogx.SiluLinear (SiLU·Mul of a fused gate/up row feeding the down projection). Decode (<= 2 rows) runs one
// matvec with the first op as its prologue; prompts run the two ops separately through a scratch buffer.
#include "providers/vulkan/graph/device_op.h"
#include "providers/vulkan/graph/linear_core.h"
#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/kernels/norm.h"

namespace ogx::vk::graph {
namespace {

int input_of(const Node& n, int k) { return k < (int)n.inputs.size() ? n.inputs[k] : -1; }
int64_t rows_of(const TensorView& t) { return t.numel() / t.shape.back(); }

TensorView scratch_view(StepScratch& s, Context& ctx, const char* key, DType dt, Shape shape) {
  TensorView v{{}, dt, std::move(shape)};
  VkDeviceSize bytes = (VkDeviceSize)v.numel() * dtype_size(dt);
  v.mem = s.buffer(ctx, key, std::max<VkDeviceSize>(bytes, 256)).slice().sub(0, bytes);
  return v;
}

// Inputs: 0 x, 1 skip, 2 gamma, 3 norm bias, 4.. the projection's weights. Outputs: 0 y, 1 x + skip.
class NormLinearOp : public DeviceOp {
 public:
  explicit NormLinearOp(OpBuildContext& b)
      : node_(b.node), core_(b, b.node.attr_string("linear", "MatMul") == "MatMulNBits", 4),
        eps_(b.node.attr_float("epsilon", 1e-5f)) {}
  bool prepares_input(int i) const override { return core_.prepares(i); }
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    OGX_CHECK(x.shape.back() == core_.K(), node_.describe(), ": input ", shape_str(x.shape), " must end in K = ",
              core_.K());
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape = x.shape;
    y.shape.back() = core_.N();
    if (a.out.size() > 1 && a.out[1]) {
      a.out[1]->dtype = x.dtype;
      a.out[1]->shape = x.shape;
    }
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch& scratch) override {
    const TensorView& x = *a.in[0];
    const TensorView* skip = a.in[1];
    const TensorView* nbias = a.in[3];
    const TensorView* residual = a.out.size() > 1 ? a.out[1] : nullptr;
    int bi = core_.bias_input();
    const TensorView* bias = bi >= 0 ? a.in[bi] : nullptr;
    if (rows_of(x) <= 2 && !nbias && !core_.int8_activations(x.dtype) &&
        core_.K() <= kernels::matvec_prologue_max_k(x.dtype)) {
      kernels::MatvecPrologue pro;
      pro.kind = kernels::MatvecPrologue::rms_norm;
      pro.skip = skip;
      pro.gamma = &need_in(a, 2, node_);
      pro.residual = residual;
      pro.epsilon = eps_;
      kernels::matvec_with_prologue(rec, pro, x, core_.weight(), bias, *a.out[0]);
      return;
    }
    TensorView xn = scratch_view(scratch, rec.context(), "normalized", x.dtype, x.shape);
    if (skip)
      kernels::skip_rms_norm(rec, x, *skip, nbias, need_in(a, 2, node_), eps_, xn, residual);
    else
      kernels::rms_norm(rec, x, need_in(a, 2, node_), eps_, xn);
    core_.record(rec, xn, bias, *a.out[0], scratch);
  }

 private:
  const Node& node_;
  LinearCore core_;
  float eps_;
};

// Inputs: 0 gate/up [.., 2K], 1.. the projection's weights. Output: 0 y [.., N].
class SiluLinearOp : public DeviceOp {
 public:
  explicit SiluLinearOp(OpBuildContext& b)
      : node_(b.node), core_(b, b.node.attr_string("linear", "MatMul") == "MatMulNBits", 1) {}
  bool prepares_input(int i) const override { return core_.prepares(i); }
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    OGX_CHECK(x.shape.back() == 2 * core_.K(), node_.describe(), ": input ", shape_str(x.shape),
              " must end in 2K = ", 2 * core_.K());
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape = x.shape;
    y.shape.back() = core_.N();
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch& scratch) override {
    const TensorView& x = *a.in[0];
    int bi = core_.bias_input();
    const TensorView* bias = bi >= 0 ? a.in[bi] : nullptr;
    if (rows_of(x) <= 2 && !core_.int8_activations(x.dtype) && core_.K() <= kernels::matvec_prologue_max_k(x.dtype)) {
      kernels::MatvecPrologue pro;
      pro.kind = kernels::MatvecPrologue::silu_mul;
      kernels::matvec_with_prologue(rec, pro, x, core_.weight(), bias, *a.out[0]);
      return;
    }
    Shape s = x.shape;
    s.back() = core_.K();
    TensorView h = scratch_view(scratch, rec.context(), "silu_mul", x.dtype, s);
    kernels::silu_mul(rec, x, x, h, true);
    core_.record(rec, h, bias, *a.out[0], scratch);
  }

 private:
  const Node& node_;
  LinearCore core_;
};

template <typename T>
OpFactory make() {
  return [](OpBuildContext& b) { return std::make_unique<T>(b); };
}

}  // namespace

void register_fused_ops(std::map<std::pair<std::string, std::string>, OpFactory>& t) {
  t[{"ogx", "NormLinear"}] = make<NormLinearOp>();
  t[{"ogx", "SiluLinear"}] = make<SiluLinearOp>();
}

}  // namespace ogx::vk::graph
