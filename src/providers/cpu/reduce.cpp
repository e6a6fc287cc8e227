// Reductions over axes (ReduceSum/Mean/Max/Min/Prod/L2/SumSquare/LogSumExp), ArgMax/ArgMin, Softmax, CumSum.
#include <cmath>
#include <cstring>
#include <limits>

#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/type_dispatch.h"

namespace ogx::cpu {
namespace {

enum class Red { sum, mean, max, min, prod, l2, sumsq, logsumexp };

void reduce_kernel(KernelContext& ctx, Red kind) {
  const Tensor& x = ctx.input(0);
  int64_t r = x.rank();
  std::vector<int64_t> axes = ctx.node().attr_ints("axes");
  if (axes.empty() && ctx.has_input(1)) axes = ctx.input(1).to_i64_vector();
  bool keep = ctx.node().attr_int("keepdims", 1) != 0;
  bool noop_empty = ctx.node().attr_int("noop_with_empty_axes", 0) != 0;
  std::vector<bool> red(r, false);
  if (axes.empty()) {
    if (noop_empty) {
      Tensor& y = ctx.output(0, x.dtype(), x.shape());
      std::memcpy(y.raw(), x.raw(), x.bytes());
      return;
    }
    red.assign(r, true);
  }
  for (auto a : axes) {
    OGX_CHECK(a >= -r && a < r, ctx.node().describe(), ": axis ", a, " out of range");
    red[a < 0 ? a + r : a] = true;
  }
  Shape s;
  for (int64_t i = 0; i < r; i++) {
    if (!red[i]) s.push_back(x.shape()[i]);
    else if (keep) s.push_back(1);
  }
  Tensor& y = ctx.output(0, x.dtype(), s);
  int64_t out_n = y.numel();
  std::vector<double> acc(out_n, 0.0);
  std::vector<int64_t> cnt(out_n, 0);
  double init = kind == Red::max ? -INFINITY : kind == Red::min ? INFINITY : kind == Red::prod ? 1.0 : 0.0;
  std::fill(acc.begin(), acc.end(), init);
  std::vector<double> mx;
  if (kind == Red::logsumexp) mx.assign(out_n, -INFINITY);
  auto out_index = [&](int64_t i) {
    int64_t rem = i, o = 0, mul = 1;
    for (int64_t d = r - 1; d >= 0; d--) {
      int64_t c = rem % x.shape()[d];
      rem /= x.shape()[d];
      if (!red[d]) {
        o += c * mul;
        mul *= x.shape()[d];
      }
    }
    return o;
  };
  if (kind == Red::logsumexp)
    for (int64_t i = 0; i < x.numel(); i++) mx[out_index(i)] = std::max(mx[out_index(i)], x.get_f64(i));
  for (int64_t i = 0; i < x.numel(); i++) {
    int64_t o = out_index(i);
    double v = x.get_f64(i);
    switch (kind) {
      case Red::sum: case Red::mean: acc[o] += v; break;
      case Red::max: acc[o] = std::max(acc[o], v); break;
      case Red::min: acc[o] = std::min(acc[o], v); break;
      case Red::prod: acc[o] *= v; break;
      case Red::l2: case Red::sumsq: acc[o] += v * v; break;
      case Red::logsumexp: acc[o] += std::exp(v - mx[o]); break;
    }
    cnt[o]++;
  }
  dispatch_numeric(x.dtype(), "Reduce", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = typename Compute<S>::type;
    for (int64_t o = 0; o < out_n; o++) {
      double v = acc[o];
      if (kind == Red::mean) v = cnt[o] ? v / (double)cnt[o] : NAN;
      if (kind == Red::l2) v = std::sqrt(v);
      if (kind == Red::logsumexp) v = std::log(v) + mx[o];
      y.data<S>()[o] = store<S>((C)v);
    }
  });
}

void arg_kernel(KernelContext& ctx, bool is_max) {
  const Tensor& x = ctx.input(0);
  int64_t r = x.rank();
  int64_t axis = ctx.node().attr_int("axis", 0);
  if (axis < 0) axis += r;
  OGX_CHECK(axis >= 0 && axis < r, ctx.node().describe(), ": bad axis");
  bool keep = ctx.node().attr_int("keepdims", 1) != 0;
  bool last = ctx.node().attr_int("select_last_index", 0) != 0;
  Shape s = x.shape();
  if (keep) s[axis] = 1;
  else s.erase(s.begin() + axis);
  Tensor& y = ctx.output(0, DType::i64, s);
  int64_t outer = 1, inner = 1, d = x.shape()[axis];
  for (int64_t i = 0; i < axis; i++) outer *= x.shape()[i];
  for (int64_t i = axis + 1; i < r; i++) inner *= x.shape()[i];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      int64_t best = 0;
      double bv = x.get_f64(o * d * inner + in);
      for (int64_t k = 1; k < d; k++) {
        double v = x.get_f64((o * d + k) * inner + in);
        bool better = is_max ? (last ? v >= bv : v > bv) : (last ? v <= bv : v < bv);
        if (better) {
          bv = v;
          best = k;
        }
      }
      y.data<int64_t>()[o * inner + in] = best;
    }
}

void softmax_kernel(KernelContext& ctx, bool log_softmax) {
  const Tensor& x = ctx.input(0);
  int64_t r = x.rank();
  int64_t axis = ctx.node().attr_int("axis", -1);
  if (axis < 0) axis += r;
  OGX_CHECK(axis >= 0 && axis < r, ctx.node().describe(), ": bad axis");
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  int64_t outer = 1, inner = 1, d = x.shape()[axis];
  for (int64_t i = 0; i < axis; i++) outer *= x.shape()[i];
  for (int64_t i = axis + 1; i < r; i++) inner *= x.shape()[i];
  dispatch_float(x.dtype(), "Softmax", [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S* px = x.data<S>();
    S* py = y.data<S>();
    std::vector<float> buf(d);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t in = 0; in < inner; in++) {
        float mx = -INFINITY;
        for (int64_t k = 0; k < d; k++) mx = std::max(mx, (float)load(px[(o * d + k) * inner + in]));
        double sum = 0;
        for (int64_t k = 0; k < d; k++) sum += buf[k] = std::exp((float)load(px[(o * d + k) * inner + in]) - mx);
        for (int64_t k = 0; k < d; k++) {
          float v = log_softmax ? (float)load(px[(o * d + k) * inner + in]) - mx - (float)std::log(sum)
                                : (float)(buf[k] / sum);
          py[(o * d + k) * inner + in] = store<S>(v);
        }
      }
  });
}

void cumsum_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t r = x.rank();
  int64_t axis = ctx.input(1).get_i64(0);
  if (axis < 0) axis += r;
  OGX_CHECK(axis >= 0 && axis < r, ctx.node().describe(), ": bad axis");
  bool excl = ctx.node().attr_int("exclusive", 0) != 0, rev = ctx.node().attr_int("reverse", 0) != 0;
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  int64_t outer = 1, inner = 1, d = x.shape()[axis];
  for (int64_t i = 0; i < axis; i++) outer *= x.shape()[i];
  for (int64_t i = axis + 1; i < r; i++) inner *= x.shape()[i];
  dispatch_numeric(x.dtype(), "CumSum", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = typename Compute<S>::type;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t in = 0; in < inner; in++) {
        C acc = 0;
        for (int64_t j = 0; j < d; j++) {
          int64_t k = rev ? d - 1 - j : j;
          int64_t off = (o * d + k) * inner + in;
          C v = load(x.data<S>()[off]);
          if (excl) {
            y.data<S>()[off] = store<S>(acc);
            acc = (C)(acc + v);
          } else {
            acc = (C)(acc + v);
            y.data<S>()[off] = store<S>(acc);
          }
        }
      }
  });
}

}  // namespace

void register_reduce(KernelRegistry& r) {
  r.add_fn("", "ReduceSum", [](KernelContext& c) { reduce_kernel(c, Red::sum); });
  r.add_fn("", "ReduceMean", [](KernelContext& c) { reduce_kernel(c, Red::mean); });
  r.add_fn("", "ReduceMax", [](KernelContext& c) { reduce_kernel(c, Red::max); });
  r.add_fn("", "ReduceMin", [](KernelContext& c) { reduce_kernel(c, Red::min); });
  r.add_fn("", "ReduceProd", [](KernelContext& c) { reduce_kernel(c, Red::prod); });
  r.add_fn("", "ReduceL2", [](KernelContext& c) { reduce_kernel(c, Red::l2); });
  r.add_fn("", "ReduceSumSquare", [](KernelContext& c) { reduce_kernel(c, Red::sumsq); });
  r.add_fn("", "ReduceLogSumExp", [](KernelContext& c) { reduce_kernel(c, Red::logsumexp); });
  r.add_fn("", "ArgMax", [](KernelContext& c) { arg_kernel(c, true); });
  r.add_fn("", "ArgMin", [](KernelContext& c) { arg_kernel(c, false); });
  r.add_fn("", "Softmax", [](KernelContext& c) { softmax_kernel(c, false); });
  r.add_fn("", "LogSoftmax", [](KernelContext& c) { softmax_kernel(c, true); });
  r.add_fn("", "CumSum", cumsum_kernel);
}

}  // namespace ogx::cpu
