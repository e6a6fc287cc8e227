// Elementwise ops (broadcast binary, activations, float casts) and the view ops that only relabel a buffer's shape
// (Reshape, Identity, Squeeze, Unsqueeze, Flatten).
#include "providers/vulkan/graph/device_op.h"
#include "providers/vulkan/kernels/elementwise.h"

namespace ogx::vk::graph {
namespace {

void check_float(const TensorView& t, const Node& n) {
  OGX_CHECK(t.dtype == DType::f32 || t.dtype == DType::f16, n.describe(), ": the Vulkan provider runs this op on "
            "float32/float16 only, got ", dtype_name(t.dtype));
}

// Output 0 = input 0's dtype and shape, a float tensor.
void infer_float_like_input(const OpArgs& a, const Node& n) {
  const TensorView& x = need_in(a, 0, n);
  check_float(x, n);
  TensorView& y = need_out(a, 0, n);
  y.dtype = x.dtype;
  y.shape = x.shape;
}

class BinaryOp : public DeviceOp {
 public:
  BinaryOp(OpBuildContext& b, kernels::BinaryOp op) : node_(b.node), op_(op) {}
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    const TensorView& y = need_in(a, 1, node_);
    check_float(x, node_);
    OGX_CHECK(x.dtype == y.dtype, node_.describe(), ": dtypes differ (", dtype_name(x.dtype), ", ",
              dtype_name(y.dtype), ")");
    TensorView& z = need_out(a, 0, node_);
    z.dtype = x.dtype;
    z.shape = kernels::broadcast_shapes(x.shape, y.shape);
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    kernels::binary(rec, op_, *a.in[0], *a.in[1], *a.out[0]);
  }

 private:
  const Node& node_;
  kernels::BinaryOp op_;
};

class UnaryOp : public DeviceOp {
 public:
  UnaryOp(OpBuildContext& b, kernels::UnaryOp op) : node_(b.node), op_(op) {}
  void infer(const OpArgs& a) override { infer_float_like_input(a, node_); }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    kernels::unary(rec, op_, *a.in[0], *a.out[0]);
  }

 private:
  const Node& node_;
  kernels::UnaryOp op_;
};

// com.microsoft FastGelu: gelu with the tanh approximation of (x + bias); the bias (input 1) is optional.
class FastGeluOp : public DeviceOp {
 public:
  explicit FastGeluOp(OpBuildContext& b) : node_(b.node) {}
  void infer(const OpArgs& a) override { infer_float_like_input(a, node_); }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    const TensorView* bias = a.in.size() > 1 ? a.in[1] : nullptr;
    if (bias) {  // y = x + bias, then gelu in place
      kernels::binary(rec, kernels::BinaryOp::add, *a.in[0], *bias, *a.out[0]);
      kernels::unary(rec, kernels::UnaryOp::gelu_tanh, *a.out[0], *a.out[0]);
      return;
    }
    kernels::unary(rec, kernels::UnaryOp::gelu_tanh, *a.in[0], *a.out[0]);
  }

 private:
  const Node& node_;
};

// Cast between float32 and float16; a cast to the same type is a view.
class CastOp : public DeviceOp {
 public:
  explicit CastOp(OpBuildContext& b) : node_(b.node), to_((DType)b.node.attr_int("to", 0)) {}
  bool is_alias() const override { return same_; }
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    same_ = x.dtype == to_;
    if (!same_) {
      check_float(x, node_);
      OGX_CHECK(to_ == DType::f32 || to_ == DType::f16, node_.describe(), ": cast to ", dtype_name(to_),
                " is not supported on the Vulkan provider");
    }
    TensorView& y = need_out(a, 0, node_);
    y.dtype = to_;
    y.shape = x.shape;
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    if (!same_) kernels::cast(rec, *a.in[0], *a.out[0]);
  }

 private:
  const Node& node_;
  DType to_;
  bool same_ = false;
};

// Ops that give input 0's memory a new shape. The shape comes from attributes or host-known inputs.
class ViewOp : public DeviceOp {
 public:
  explicit ViewOp(OpBuildContext& b) : node_(b.node) {}
  bool is_alias() const override { return true; }
  bool reads_on_host(int i) const override { return i >= 1; }
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape = shape_of(x.shape, a);
    OGX_CHECK(shape_numel(y.shape) == x.numel(), node_.describe(), ": cannot view ", shape_str(x.shape), " as ",
              shape_str(y.shape));
  }
  void record(CommandRecorder&, const OpArgs&, StepScratch&) override {}

 private:
  std::vector<int64_t> axes(const OpArgs& a, size_t rank) const {
    std::vector<int64_t> ax = node_.attr_ints("axes");
    if (a.host.size() > 1 && a.host[1]) ax = a.host[1]->to_i64_vector();
    for (auto& v : ax) v = v < 0 ? v + (int64_t)rank : v;
    return ax;
  }
  Shape shape_of(const Shape& in, const OpArgs& a) const {
    const std::string& op = node_.op_type;
    if (op == "Identity") return in;
    if (op == "Flatten") {
      int64_t axis = node_.attr_int("axis", 1);
      if (axis < 0) axis += (int64_t)in.size();
      int64_t outer = 1;
      for (int64_t i = 0; i < axis; i++) outer *= in[i];
      return {outer, shape_numel(in) / std::max<int64_t>(outer, 1)};
    }
    if (op == "Squeeze") {
      std::vector<int64_t> ax = axes(a, in.size());
      Shape out;
      for (size_t i = 0; i < in.size(); i++) {
        bool drop = ax.empty() ? in[i] == 1 : std::find(ax.begin(), ax.end(), (int64_t)i) != ax.end();
        if (!drop) out.push_back(in[i]);
      }
      return out;
    }
    if (op == "Unsqueeze") {
      Shape out = in;
      std::vector<int64_t> ax = axes(a, in.size() + node_.attr_ints("axes").size() +
                                            (a.host.size() > 1 && a.host[1] ? a.host[1]->numel() : 0));
      std::sort(ax.begin(), ax.end());
      for (int64_t v : ax) out.insert(out.begin() + std::min<int64_t>(v, (int64_t)out.size()), 1);
      return out;
    }
    // Reshape
    OGX_CHECK(a.host.size() > 1 && a.host[1], node_.describe(), ": the target shape must be known on the host");
    std::vector<int64_t> s = a.host[1]->to_i64_vector();
    bool allowzero = node_.attr_int("allowzero", 0) != 0;
    int64_t known = 1, infer_at = -1;
    for (size_t i = 0; i < s.size(); i++) {
      if (s[i] == 0 && !allowzero) {
        OGX_CHECK(i < in.size(), node_.describe(), ": 0 in the shape refers to a missing input dimension");
        s[i] = in[i];
      }
      if (s[i] == -1) {
        OGX_CHECK(infer_at < 0, node_.describe(), ": more than one -1 in the target shape");
        infer_at = (int64_t)i;
      } else {
        known *= s[i];
      }
    }
    if (infer_at >= 0) s[infer_at] = known ? shape_numel(in) / known : 0;
    return Shape(s.begin(), s.end());
  }
  const Node& node_;
};

template <typename T, typename... A>
OpFactory make(A... args) {
  return [=](OpBuildContext& b) { return std::make_unique<T>(b, args...); };
}

}  // namespace

void register_elementwise_ops(std::map<std::pair<std::string, std::string>, OpFactory>& t) {
  t[{"", "Add"}] = make<BinaryOp>(kernels::BinaryOp::add);
  t[{"", "Sub"}] = make<BinaryOp>(kernels::BinaryOp::sub);
  t[{"", "Mul"}] = make<BinaryOp>(kernels::BinaryOp::mul);
  t[{"", "Div"}] = make<BinaryOp>(kernels::BinaryOp::div);
  t[{"", "Sigmoid"}] = make<UnaryOp>(kernels::UnaryOp::sigmoid);
  t[{"", "Neg"}] = make<UnaryOp>(kernels::UnaryOp::neg);
  t[{"", "Tanh"}] = make<UnaryOp>(kernels::UnaryOp::tanh);
  t[{"com.microsoft", "FastGelu"}] = make<FastGeluOp>();
  t[{"", "Cast"}] = make<CastOp>();
  for (const char* op : {"Reshape", "Identity", "Squeeze", "Unsqueeze", "Flatten"}) t[{"", op}] = make<ViewOp>();
}

}  // namespace ogx::vk::graph
