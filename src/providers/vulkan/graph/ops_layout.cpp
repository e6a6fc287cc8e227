// Layout ops on the device, all through kernels/layout.h: Transpose, Slice, Split, Concat, Expand, Tile, Pad,
// ConstantOfShape (strided copies), GatherND, ScatterND, Softmax, LogSoftmax. Shape inputs (perm, starts, pads,
// repeats, ...) are read on the host: their values join the step's signature.
#include <cstring>

#include "common/half.h"

#include "providers/vulkan/graph/device_op.h"
#include "providers/vulkan/kernels/elementwise.h"
#include "providers/vulkan/kernels/layout.h"

namespace ogx::vk::graph {
namespace {

using kernels::CopyPlan;
using kernels::contiguous_strides;

int64_t norm_axis(int64_t axis, size_t rank, const Node& n) {
  int64_t r = (int64_t)rank;
  OGX_CHECK(axis >= -r && axis < r, n.describe(), ": axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + r : axis;
}

// A host input as int64 values; `dflt` when omitted.
std::vector<int64_t> host_ints(const OpArgs& a, int k, const Node& n, std::vector<int64_t> dflt = {},
                               bool need = false) {
  if (k < (int)a.host.size() && a.host[k]) return a.host[k]->to_i64_vector();
  OGX_CHECK(!need, n.describe(), ": input ", k, " must be known on the host");
  return dflt;
}

// Base class: every listed input from `first_host` on is read on the host.
class HostShapedOp : public DeviceOp {
 public:
  HostShapedOp(OpBuildContext& b, int first_host) : node_(b.node), first_host_(first_host) {}
  bool reads_on_host(int i) const override { return first_host_ >= 0 && i >= first_host_; }

 protected:
  const Node& node_;
  int first_host_;
};

class TransposeOp : public HostShapedOp {
 public:
  explicit TransposeOp(OpBuildContext& b) : HostShapedOp(b, -1) {}
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    size_t r = x.shape.size();
    perm_ = node_.attr_ints("perm");
    if (perm_.empty())
      for (size_t d = r; d-- > 0;) perm_.push_back((int64_t)d);
    OGX_CHECK(perm_.size() == r, node_.describe(), ": perm has ", perm_.size(), " entries for rank ", r);
    std::vector<char> seen(r, 0);
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape.clear();
    for (int64_t& p : perm_) {
      p = norm_axis(p, r, node_);
      OGX_CHECK(!seen[p], node_.describe(), ": perm repeats axis ", p);
      seen[p] = 1;
      y.shape.push_back(x.shape[p]);
    }
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    const TensorView& x = *a.in[0];
    std::vector<int64_t> st = contiguous_strides(x.shape);
    CopyPlan plan;
    plan.dims = a.out[0]->shape;
    for (int64_t p : perm_) plan.src_strides.push_back(st[p]);
    kernels::copy_strided(rec, x, *a.out[0], plan);
  }

 private:
  std::vector<int64_t> perm_;
};

// ONNX Slice clamping of one axis: start index and element count.
void slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t* first, int64_t* count) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    *count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    *count = start > end ? (start - end - step - 1) / -step : 0;
  }
  *first = start;
}

class SliceOp : public HostShapedOp {
 public:
  explicit SliceOp(OpBuildContext& b) : HostShapedOp(b, 1) {}
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    size_t r = x.shape.size();
    bool attrs = node_.inputs.size() < 2;  // opset 1
    std::vector<int64_t> starts = attrs ? node_.attr_ints("starts") : host_ints(a, 1, node_, {}, true);
    std::vector<int64_t> ends = attrs ? node_.attr_ints("ends") : host_ints(a, 2, node_, {}, true);
    std::vector<int64_t> axes = attrs ? node_.attr_ints("axes") : host_ints(a, 3, node_);
    std::vector<int64_t> steps = attrs ? std::vector<int64_t>{} : host_ints(a, 4, node_);
    OGX_CHECK(starts.size() == ends.size(), node_.describe(), ": starts and ends differ in length");
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); i++) axes.push_back((int64_t)i);
    if (steps.empty()) steps.assign(starts.size(), 1);
    OGX_CHECK(axes.size() == starts.size() && steps.size() == starts.size(), node_.describe(),
              ": starts, ends, axes and steps differ in length");
    first_.assign(r, 0);
    step_.assign(r, 1);
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape = x.shape;
    for (size_t i = 0; i < axes.size(); i++) {
      int64_t ax = norm_axis(axes[i], r, node_);
      OGX_CHECK(steps[i] != 0, node_.describe(), ": a step is 0");
      slice_axis(x.shape[ax], starts[i], ends[i], steps[i], &first_[ax], &y.shape[ax]);
      step_[ax] = steps[i];
    }
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    const TensorView& x = *a.in[0];
    std::vector<int64_t> st = contiguous_strides(x.shape);
    CopyPlan plan;
    plan.dims = a.out[0]->shape;
    for (size_t d = 0; d < st.size(); d++) {
      plan.src_strides.push_back(st[d] * step_[d]);
      if (plan.dims[d] > 0) plan.src_offset += first_[d] * st[d];
    }
    kernels::copy_strided(rec, x, *a.out[0], plan);
  }

 private:
  std::vector<int64_t> first_, step_;
};

// Split (split sizes from input 1 (opset 13+), the `split` attribute, num_outputs (opset 18) or equal parts).
class SplitOp : public HostShapedOp {
 public:
  explicit SplitOp(OpBuildContext& b) : HostShapedOp(b, 1) {}
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    axis_ = norm_axis(node_.attr_int("axis", 0), x.shape.size(), node_);
    int64_t dim = x.shape[axis_], outs = (int64_t)node_.outputs.size();
    sizes_ = host_ints(a, 1, node_, node_.attr_ints("split"));
    if (sizes_.empty()) {
      int64_t parts = node_.attr_int("num_outputs", outs);
      OGX_CHECK(parts == outs, node_.describe(), ": num_outputs ", parts, " but ", outs, " outputs");
      int64_t each = (dim + parts - 1) / parts;  // the last part may be smaller (opset 18)
      for (int64_t k = 0; k < parts; k++) sizes_.push_back(std::max<int64_t>(0, std::min(each, dim - k * each)));
      OGX_CHECK(node_.has_attr("num_outputs") || dim % parts == 0, node_.describe(), ": ", dim,
                " does not split into ", parts, " equal parts");
    }
    OGX_CHECK((int64_t)sizes_.size() == outs, node_.describe(), ": ", sizes_.size(), " split sizes for ", outs,
              " outputs");
    int64_t total = 0;
    for (size_t k = 0; k < sizes_.size(); k++) {
      total += sizes_[k];
      if (k < a.out.size() && a.out[k]) {
        a.out[k]->dtype = x.dtype;
        a.out[k]->shape = x.shape;
        a.out[k]->shape[axis_] = sizes_[k];
      }
    }
    OGX_CHECK(total == dim, node_.describe(), ": split sizes sum to ", total, ", axis ", axis_, " has ", dim);
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    const TensorView& x = *a.in[0];
    std::vector<int64_t> st = contiguous_strides(x.shape);
    int64_t at = 0;
    for (size_t k = 0; k < sizes_.size(); k++) {
      if (k < a.out.size() && a.out[k]) {
        CopyPlan plan;
        plan.dims = a.out[k]->shape;
        plan.src_strides = st;
        plan.src_offset = at * st[axis_];
        kernels::copy_strided(rec, x, *a.out[k], plan);
      }
      at += sizes_[k];
    }
  }

 private:
  int64_t axis_ = 0;
  std::vector<int64_t> sizes_;
};

class ConcatOp : public HostShapedOp {
 public:
  explicit ConcatOp(OpBuildContext& b) : HostShapedOp(b, -1) {}
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    axis_ = norm_axis(node_.attr_int("axis", 0), x.shape.size(), node_);
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape = x.shape;
    y.shape[axis_] = 0;
    for (size_t k = 0; k < node_.inputs.size(); k++) {
      const TensorView& t = need_in(a, (int)k, node_);
      OGX_CHECK(t.dtype == x.dtype && t.shape.size() == x.shape.size(), node_.describe(), ": input ", k, " ",
                shape_str(t.shape), " does not concatenate with ", shape_str(x.shape));
      for (size_t d = 0; d < t.shape.size(); d++)
        OGX_CHECK((int64_t)d == axis_ || t.shape[d] == x.shape[d], node_.describe(), ": input ", k, " ",
                  shape_str(t.shape), " does not concatenate with ", shape_str(x.shape));
      y.shape[axis_] += t.shape[axis_];
    }
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    const TensorView& y = *a.out[0];
    std::vector<int64_t> dst = contiguous_strides(y.shape);
    int64_t at = 0;
    for (size_t k = 0; k < node_.inputs.size(); k++) {
      const TensorView& t = *a.in[k];
      CopyPlan plan;
      plan.dims = t.shape;
      plan.src_strides = contiguous_strides(t.shape);
      plan.dst_strides = dst;
      plan.dst_offset = at * dst[axis_];
      kernels::copy_strided(rec, t, y, plan);
      at += t.shape[axis_];
    }
  }

 private:
  int64_t axis_ = 0;
};

// Strides of x read at the positions of `out` (numpy broadcasting; 0 along broadcast axes).
std::vector<int64_t> broadcast_read_strides(const Shape& x, const Shape& out) {
  std::vector<int64_t> st = contiguous_strides(x), r(out.size(), 0);
  size_t off = out.size() - x.size();
  for (size_t d = 0; d < x.size(); d++) r[off + d] = x[d] == 1 ? 0 : st[d];
  return r;
}

class ExpandOp : public HostShapedOp {
 public:
  explicit ExpandOp(OpBuildContext& b) : HostShapedOp(b, 1) {}
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    std::vector<int64_t> s = host_ints(a, 1, node_, {}, true);
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape = kernels::broadcast_shapes(x.shape, Shape(s.begin(), s.end()));
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    CopyPlan plan;
    plan.dims = a.out[0]->shape;
    plan.src_strides = broadcast_read_strides(a.in[0]->shape, plan.dims);
    kernels::copy_strided(rec, *a.in[0], *a.out[0], plan);
  }
};

class TileOp : public HostShapedOp {
 public:
  explicit TileOp(OpBuildContext& b) : HostShapedOp(b, 1) {}
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    std::vector<int64_t> rep = host_ints(a, 1, node_, {}, true);
    OGX_CHECK(rep.size() == x.shape.size(), node_.describe(), ": repeats has ", rep.size(), " entries for rank ",
              x.shape.size());
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape = x.shape;
    for (size_t d = 0; d < rep.size(); d++) {
      OGX_CHECK(rep[d] >= 0, node_.describe(), ": negative repeat");
      y.shape[d] *= rep[d];
    }
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    const TensorView& x = *a.in[0];
    CopyPlan plan;
    plan.dims = a.out[0]->shape;
    plan.src_strides = contiguous_strides(x.shape);
    plan.begin.assign(x.shape.size(), 0);
    plan.src_dims = x.shape;
    plan.mode = kernels::PadMode::wrap;
    kernels::copy_strided(rec, x, *a.out[0], plan);
  }
};

// The raw bits of element 0 of a host tensor (a pad or fill value).
uint64_t value_bits(const Tensor& t) {
  uint64_t bits = 0;
  if (t.numel() > 0) std::memcpy(&bits, t.raw(), dtype_size(t.dtype()));
  return bits;
}

// The raw bits of v stored as dtype t.
uint64_t float_bits(DType t, double v) {
  uint64_t bits = 0;
  auto put = [&](auto x) { std::memcpy(&bits, &x, sizeof(x)); };
  switch (t) {
    case DType::f32: put((float)v); break;
    case DType::f16: put(f32_to_f16((float)v)); break;
    case DType::boolean: put((uint8_t)(v != 0)); break;
    case DType::i32: put((int32_t)v); break;
    default: put((int64_t)v); break;
  }
  return bits;
}

// Pad (opset 11+: pads / constant_value / axes inputs; opset 2: attributes), modes constant / edge / reflect / wrap.
class PadOp : public HostShapedOp {
 public:
  explicit PadOp(OpBuildContext& b) : HostShapedOp(b, 1) {
    std::string m = node_.attr_string("mode", "constant");
    using kernels::PadMode;
    mode_ = m == "constant" ? PadMode::constant : m == "edge" ? PadMode::edge : m == "reflect" ? PadMode::reflect
            : m == "wrap" ? PadMode::wrap : PadMode::none;
    OGX_CHECK(mode_ != kernels::PadMode::none, node_.describe(), ": unknown mode '", m, "'");
  }
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    size_t r = x.shape.size();
    bool attrs = node_.inputs.size() < 2;
    std::vector<int64_t> pads = attrs ? node_.attr_ints("pads") : host_ints(a, 1, node_, {}, true);
    std::vector<int64_t> axes = host_ints(a, 3, node_);
    if (axes.empty())
      for (size_t d = 0; d < r; d++) axes.push_back((int64_t)d);
    OGX_CHECK(pads.size() == 2 * axes.size(), node_.describe(), ": ", pads.size(), " pads for ", axes.size(), " axes");
    begin_.assign(r, 0);
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape = x.shape;
    for (size_t i = 0; i < axes.size(); i++) {
      int64_t ax = norm_axis(axes[i], r, node_);
      begin_[ax] = pads[i];
      y.shape[ax] += pads[i] + pads[i + axes.size()];
      OGX_CHECK(y.shape[ax] >= 0, node_.describe(), ": pads crop axis ", ax, " below zero");
      OGX_CHECK(mode_ == kernels::PadMode::constant || x.shape[ax] > 0 || y.shape[ax] == 0, node_.describe(),
                ": mode ", node_.attr_string("mode", "constant"), " cannot pad an empty axis");
    }
    bits_ = 0;
    if (attrs) {
      bits_ = float_bits(x.dtype, node_.attr_float("value", 0.0f));
    } else if (a.host.size() > 2 && a.host[2]) {
      OGX_CHECK(a.host[2]->dtype() == x.dtype, node_.describe(), ": constant_value must have the data's dtype");
      bits_ = value_bits(*a.host[2]);
    }
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    const TensorView& x = *a.in[0];
    CopyPlan plan;
    plan.dims = a.out[0]->shape;
    plan.src_strides = contiguous_strides(x.shape);
    plan.begin = begin_;
    plan.src_dims = x.shape;
    plan.mode = mode_;
    plan.pad_bits = bits_;
    kernels::copy_strided(rec, x, *a.out[0], plan);
  }

 private:
  kernels::PadMode mode_;
  std::vector<int64_t> begin_;
  uint64_t bits_ = 0;
};

class ConstantOfShapeOp : public HostShapedOp {
 public:
  explicit ConstantOfShapeOp(OpBuildContext& b) : HostShapedOp(b, 0) {
    if (const Tensor* v = node_.attr_tensor("value")) {
      dtype_ = v->dtype();
      bits_ = value_bits(*v);
    }
  }
  void infer(const OpArgs& a) override {
    std::vector<int64_t> s = host_ints(a, 0, node_, {}, true);
    TensorView& y = need_out(a, 0, node_);
    y.dtype = dtype_;
    y.shape = Shape(s.begin(), s.end());
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    const TensorView& y = *a.out[0];
    CopyPlan plan;  // every position is outside an empty source: all get the value
    plan.dims = {y.numel()};
    plan.src_strides = {0};
    plan.begin = {0};
    plan.src_dims = {0};
    plan.mode = kernels::PadMode::constant;
    plan.pad_bits = bits_;
    TensorView flat = y;
    flat.shape = {y.numel()};
    kernels::copy_strided(rec, flat, flat, plan);
  }

 private:
  DType dtype_ = DType::f32;
  uint64_t bits_ = 0;
};

class GatherNdOp : public HostShapedOp {
 public:
  explicit GatherNdOp(OpBuildContext& b) : HostShapedOp(b, -1), batch_dims_(b.node.attr_int("batch_dims", 0)) {}
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    const TensorView& idx = need_in(a, 1, node_);
    OGX_CHECK(idx.dtype == DType::i64, node_.describe(), ": indices must be int64");
    OGX_CHECK(!idx.shape.empty(), node_.describe(), ": indices must have rank >= 1");
    int64_t k = idx.shape.back(), b = batch_dims_;
    OGX_CHECK(b >= 0 && b < (int64_t)idx.shape.size() && b + k <= (int64_t)x.shape.size(), node_.describe(),
              ": index tuples of ", k, " with batch_dims ", b, " do not fit data ", shape_str(x.shape));
    for (int64_t d = 0; d < b; d++)
      OGX_CHECK(idx.shape[d] == x.shape[d], node_.describe(), ": batch dims of data and indices differ");
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape.assign(idx.shape.begin(), idx.shape.end() - 1);
    y.shape.insert(y.shape.end(), x.shape.begin() + b + k, x.shape.end());
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    kernels::gather_nd(rec, *a.in[0], *a.in[1], batch_dims_, *a.out[0]);
  }

 private:
  int64_t batch_dims_;
};

class ScatterNdOp : public HostShapedOp {
 public:
  explicit ScatterNdOp(OpBuildContext& b) : HostShapedOp(b, -1) {
    std::string r = node_.attr_string("reduction", "none");
    reduction_ = r == "none" ? 0 : r == "add" ? 1 : r == "mul" ? 2 : r == "max" ? 3 : r == "min" ? 4 : -1;
    OGX_CHECK(reduction_ >= 0, node_.describe(), ": unknown reduction '", r, "'");
  }
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    const TensorView& idx = need_in(a, 1, node_);
    const TensorView& upd = need_in(a, 2, node_);
    OGX_CHECK(idx.dtype == DType::i64 && !idx.shape.empty(), node_.describe(), ": indices must be int64, rank >= 1");
    int64_t k = idx.shape.back();
    OGX_CHECK(k >= 1 && k <= (int64_t)x.shape.size(), node_.describe(), ": index tuples of ", k,
              " do not fit data ", shape_str(x.shape));
    Shape want(idx.shape.begin(), idx.shape.end() - 1);
    want.insert(want.end(), x.shape.begin() + k, x.shape.end());
    OGX_CHECK(upd.shape == want, node_.describe(), ": updates ", shape_str(upd.shape), " must be ", shape_str(want));
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape = x.shape;
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    kernels::scatter_nd(rec, *a.in[0], *a.in[1], *a.in[2], reduction_, *a.out[0]);
  }

 private:
  int reduction_ = 0;
};

class SoftmaxOp : public HostShapedOp {
 public:
  explicit SoftmaxOp(OpBuildContext& b) : HostShapedOp(b, -1), log_(b.node.op_type == "LogSoftmax") {}
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    OGX_CHECK(x.dtype == DType::f32 || x.dtype == DType::f16, node_.describe(), ": float32 / float16 only");
    axis_ = norm_axis(node_.attr_int("axis", -1), x.shape.size(), node_);
    TensorView& y = need_out(a, 0, node_);
    y.dtype = x.dtype;
    y.shape = x.shape;
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    kernels::softmax(rec, *a.in[0], axis_, log_, *a.out[0]);
  }

 private:
  bool log_;
  int64_t axis_ = 0;
};

template <typename T>
OpFactory make() {
  return [](OpBuildContext& b) { return std::make_unique<T>(b); };
}

}  // namespace

void register_layout_ops(std::map<std::pair<std::string, std::string>, OpFactory>& t) {
  t[{"", "Transpose"}] = make<TransposeOp>();
  t[{"", "Slice"}] = make<SliceOp>();
  t[{"", "Split"}] = make<SplitOp>();
  t[{"", "Concat"}] = make<ConcatOp>();
  t[{"", "Expand"}] = make<ExpandOp>();
  t[{"", "Tile"}] = make<TileOp>();
  t[{"", "Pad"}] = make<PadOp>();
  t[{"", "ConstantOfShape"}] = make<ConstantOfShapeOp>();
  t[{"", "GatherND"}] = make<GatherNdOp>();
  t[{"", "ScatterND"}] = make<ScatterNdOp>();
  t[{"", "Softmax"}] = make<SoftmaxOp>();
  t[{"", "LogSoftmax"}] = make<SoftmaxOp>();
}

}  // namespace ogx::vk::graph
