// Elementwise ops (every row of kernels/elementwise_ops.table, Cast) and the view ops that only relabel a buffer's
// shape (Reshape, Identity, Squeeze, Unsqueeze, Flatten).
#include <cmath>
#include <sstream>

#include "providers/vulkan/graph/device_op.h"
#include "providers/vulkan/kernels/elementwise.h"

namespace ogx::vk::graph {
namespace {

// A row's spec column (kernels/elementwise_ops.table), parsed.
struct RowSpec {
  struct Param {
    std::string attr;
    int input = -1;  // the value may come from this input instead (Clip's min / max)
    float dflt = 0.0f;
    bool integer = false;
  };
  std::vector<Param> params;  // a, b
  std::string if_attr, if_default, if_value;
  int bias_input = -1;
  bool variadic = false;
};

float parse_float(const std::string& s) {
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  return std::stof(s);
}

RowSpec parse_spec(const kernels::ElementwiseRow& row) {
  RowSpec r;
  std::istringstream in(row.spec);
  std::string tok;
  auto bad = [&] { throw_error("elementwise_ops.table: bad spec token '", tok, "' of ", row.op_type); };
  while (in >> tok) {
    if (tok == "variadic") {
      r.variadic = true;
    } else if (tok.rfind("bias@", 0) == 0) {
      r.bias_input = std::stoi(tok.substr(5));
    } else if (tok.rfind("if=", 0) == 0) {  // if=ATTR:DEFAULT==VALUE
      size_t c = tok.find(':'), e = tok.find("==");
      if (c == std::string::npos || e == std::string::npos) bad();
      r.if_attr = tok.substr(3, c - 3);
      r.if_default = tok.substr(c + 1, e - c - 1);
      r.if_value = tok.substr(e + 2);
    } else if (tok.size() > 2 && (tok.rfind("a=", 0) == 0 || tok.rfind("b=", 0) == 0 || tok.rfind("int=", 0) == 0)) {
      RowSpec::Param p;
      p.integer = tok[0] == 'i';
      std::string body = tok.substr(tok.find('=') + 1);
      size_t c = body.rfind(':');
      if (c == std::string::npos) bad();
      p.dflt = parse_float(body.substr(c + 1));
      p.attr = body.substr(0, c);
      if (size_t at = p.attr.find('@'); at != std::string::npos) {
        p.input = std::stoi(p.attr.substr(at + 1));
        p.attr = p.attr.substr(0, at);
      }
      r.params.push_back(p);
    } else {
      bad();
    }
  }
  return r;
}

// The row of `n`'s op that applies to its attributes (e.g. Gelu's approximate).
const kernels::ElementwiseRow& row_for(const Node& n) {
  for (const kernels::ElementwiseRow& row : kernels::elementwise_rows()) {
    if (row.domain != n.domain || row.op_type != n.op_type) continue;
    RowSpec s = parse_spec(row);
    if (s.if_attr.empty() || n.attr_string(s.if_attr, s.if_default) == s.if_value) return row;
  }
  throw_error(n.describe(), ": no Vulkan kernel for these attributes");
}

// Every op of kernels/elementwise_ops.table: unary (with an optional bias), binary (variadic: folded left to
// right into the output), compare, select.
class ElementwiseOp : public DeviceOp {
 public:
  explicit ElementwiseOp(OpBuildContext& b) : node_(b.node), row_(row_for(b.node)), spec_(parse_spec(row_)) {}
  bool reads_on_host(int i) const override {
    for (auto& p : spec_.params)
      if (p.input == i) return true;
    return false;
  }
  bool is_alias() const override { return spec_.variadic && data_inputs() == 1; }
  void infer(const OpArgs& a) override {
    int n = data_inputs();
    OGX_CHECK(n >= 1, node_.describe(), ": no inputs");
    const TensorView& x = need_in(a, row_.kind == "select" ? 1 : 0, node_);
    OGX_CHECK(row_.allows(x.dtype), node_.describe(), ": the Vulkan provider runs ", row_.op_type, " on ", row_.types,
              " tensors, got ", dtype_name(x.dtype));
    bool select = row_.kind == "select";
    for (int k = select ? 1 : 0; k < n; k++)
      OGX_CHECK(need_in(a, k, node_).dtype == x.dtype, node_.describe(), ": input ", k, " is ",
                dtype_name(a.in[k]->dtype), ", input ", select ? 1 : 0, " ", dtype_name(x.dtype));
    if (select)
      OGX_CHECK(need_in(a, 0, node_).dtype == DType::boolean, node_.describe(), ": the condition must be bool");
    Shape s = need_in(a, 0, node_).shape;
    for (int k = 1; k < n; k++) s = kernels::broadcast_shapes(s, need_in(a, k, node_).shape);
    if (bias(a)) s = kernels::broadcast_shapes(s, bias(a)->shape);
    TensorView& y = need_out(a, 0, node_);
    y.dtype = row_.kind == "compare" ? DType::boolean : x.dtype;
    y.shape = s;
    for (size_t i = 0; i < spec_.params.size(); i++) {
      const RowSpec::Param& p = spec_.params[i];
      float v = p.integer ? (float)node_.attr_int(p.attr, (int64_t)p.dflt) : node_.attr_float(p.attr, p.dflt);
      if (p.input >= 0 && p.input < (int)a.host.size() && a.host[p.input]) {
        OGX_CHECK(a.host[p.input]->numel() == 1, node_.describe(), ": input ", p.input, " must be a scalar");
        v = (float)a.host[p.input]->get_f64(0);
      }
      param_[i] = v;
    }
  }
  void record(CommandRecorder& rec, const OpArgs& a, StepScratch&) override {
    const TensorView& y = *a.out[0];
    if (const TensorView* b = bias(a)) {  // y = x + bias, then f in place
      kernels::elementwise(rec, kernels::elementwise_row("", "Add"), {a.in[0], b}, y);
      kernels::elementwise(rec, row_, {&y}, y, param_[0], param_[1]);
      return;
    }
    int n = data_inputs();
    if (row_.kind == "unary") {
      kernels::elementwise(rec, row_, {a.in[0]}, y, param_[0], param_[1]);
    } else if (row_.kind == "select") {
      kernels::elementwise(rec, row_, {a.in[0], a.in[1], a.in[2]}, y);
    } else if (n >= 2) {
      kernels::elementwise(rec, row_, {a.in[0], a.in[1]}, y, param_[0], param_[1]);
      for (int k = 2; k < n; k++) kernels::elementwise(rec, row_, {&y, a.in[k]}, y, param_[0], param_[1]);
    }
  }

 private:
  int data_inputs() const {
    if (spec_.variadic) return (int)node_.inputs.size();
    return row_.kind == "unary" ? 1 : row_.kind == "select" ? 3 : 2;
  }
  const TensorView* bias(const OpArgs& a) const {
    int k = spec_.bias_input;
    return k >= 0 && k < (int)a.in.size() ? a.in[k] : nullptr;
  }
  const Node& node_;
  const kernels::ElementwiseRow& row_;
  RowSpec spec_;
  float param_[2] = {0.0f, 0.0f};
};

// Cast between float32, float16, int32, int64 and bool; a cast to the same type is a view.
class CastOp : public DeviceOp {
 public:
  explicit CastOp(OpBuildContext& b) : node_(b.node), to_((DType)b.node.attr_int("to", 0)) {}
  bool is_alias() const override { return same_; }
  void infer(const OpArgs& a) override {
    const TensorView& x = need_in(a, 0, node_);
    same_ = x.dtype == to_;
    for (DType t : {x.dtype, to_})
      OGX_CHECK(same_ || t == DType::f32 || t == DType::f16 || t == DType::i32 || t == DType::i64 ||
                t == DType::boolean, node_.describe(), ": the Vulkan provider casts between float32, float16, int32, "
                "int64 and bool, not ", dtype_name(x.dtype), " -> ", dtype_name(to_));
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
  for (const kernels::ElementwiseRow& row : kernels::elementwise_rows())  // the table's ops
    t[{row.domain, row.op_type}] = make<ElementwiseOp>();
  t[{"", "Cast"}] = make<CastOp>();
  for (const char* op : {"Reshape", "Identity", "Squeeze", "Unsqueeze", "Flatten"}) t[{"", op}] = make<ViewOp>();
}

}  // namespace ogx::vk::graph
