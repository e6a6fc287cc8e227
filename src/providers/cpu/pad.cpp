// Pad (ai.onnx 2/11/13/18/19/21): modes constant, edge, reflect, wrap; pads / constant_value / axes inputs (opset
// 11+) or the pads / value attributes (opset 2). Negative pads crop.
#include <cstring>

#include "providers/cpu/broadcast.h"
#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/type_dispatch.h"

namespace ogx::cpu {
namespace {

// Maps s (may be outside [0, len)) into the source by mode; false when the constant applies.
bool source_coord(const std::string& mode, int64_t len, int64_t* s) {
  if (*s >= 0 && *s < len) return true;
  if (mode == "constant" || len == 0) return false;
  if (mode == "edge") {
    *s = std::clamp<int64_t>(*s, 0, len - 1);
  } else if (mode == "reflect") {
    int64_t period = 2 * (len - 1);
    if (period == 0) {
      *s = 0;
    } else {
      *s = ((*s % period) + period) % period;
      if (*s >= len) *s = period - *s;
    }
  } else {  // wrap
    *s = ((*s % len) + len) % len;
  }
  return true;
}

void pad_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Node& n = ctx.node();
  std::string mode = n.attr_string("mode", "constant");
  OGX_CHECK(mode == "constant" || mode == "edge" || mode == "reflect" || mode == "wrap", n.describe(),
            ": unknown mode '", mode, "'");
  int64_t r = x.rank();
  bool attrs = !ctx.has_input(1);
  std::vector<int64_t> pads = attrs ? n.attr_ints("pads") : ctx.input(1).to_i64_vector();
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) axes = ctx.input(3).to_i64_vector();
  if (axes.empty())
    for (int64_t d = 0; d < r; d++) axes.push_back(d);
  OGX_CHECK(pads.size() == 2 * axes.size(), n.describe(), ": ", pads.size(), " pads for ", axes.size(), " axes");
  std::vector<int64_t> begin(r, 0);
  Shape s = x.shape();
  for (size_t i = 0; i < axes.size(); i++) {
    int64_t ax = axes[i] < 0 ? axes[i] + r : axes[i];
    OGX_CHECK(ax >= 0 && ax < r, n.describe(), ": axis ", axes[i], " out of range");
    begin[ax] = pads[i];
    s[ax] += pads[i] + pads[i + axes.size()];
    OGX_CHECK(s[ax] >= 0, n.describe(), ": pads crop axis ", ax, " below zero");
    OGX_CHECK(mode == "constant" || x.shape()[ax] > 0 || s[ax] == 0, n.describe(), ": mode ", mode,
              " cannot pad an empty axis");
  }
  size_t es = dtype_size(x.dtype());
  std::vector<char> value(es, 0);
  if (attrs) {
    float v = n.attr_float("value", 0.0f);
    dispatch_all(x.dtype(), "Pad", [&](auto tag) {
      using S = typename decltype(tag)::type;
      S sv = store<S>((typename Compute<S>::type)v);
      std::memcpy(value.data(), &sv, es);
    });
  } else if (ctx.has_input(2) && ctx.input(2).numel() > 0) {
    OGX_CHECK(ctx.input(2).dtype() == x.dtype(), n.describe(), ": constant_value must have the data's dtype");
    std::memcpy(value.data(), ctx.input(2).raw(), es);
  }
  Tensor& y = ctx.output(0, x.dtype(), s);
  std::vector<int64_t> xs = contiguous_strides(x.shape());
  for (int64_t i = 0; i < y.numel(); i++) {
    int64_t rem = i, off = 0;
    bool inside = true;
    for (int64_t d = r - 1; d >= 0; d--) {
      int64_t c = rem % s[d];
      rem /= s[d];
      int64_t src = c - begin[d];
      inside = inside && source_coord(mode, x.shape()[d], &src);
      off += src * xs[d];
    }
    std::memcpy((char*)y.raw() + i * es, inside ? (const char*)x.raw() + off * es : value.data(), es);
  }
}

}  // namespace

void register_pad(KernelRegistry& r) { r.add_fn("", "Pad", pad_kernel); }

}  // namespace ogx::cpu
