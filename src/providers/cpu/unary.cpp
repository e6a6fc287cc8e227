// Unary elementwise ops (activations, math) and Cast. f16/bf16 compute in float.
#include <cmath>
#include <cstring>

#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/type_dispatch.h"
#include "providers/cpu/vec_math.h"

namespace ogx::cpu {
namespace {

template <typename Op>
void unary_float(KernelContext& ctx, Op op) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  dispatch_float(x.dtype(), ctx.node().op_type.c_str(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = typename Compute<S>::type;
    const S* px = x.data<S>();
    S* py = y.data<S>();
    int64_t n = x.numel();
    ctx.pool().parallel_for(n, 1 << 14, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) py[i] = store<S>((C)op((C)load(px[i])));
    });
  });
}

template <typename Op>
void unary_numeric(KernelContext& ctx, Op op) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  dispatch_numeric(x.dtype(), ctx.node().op_type.c_str(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = typename Compute<S>::type;
    const S* px = x.data<S>();
    S* py = y.data<S>();
    for (int64_t i = 0; i < x.numel(); i++) py[i] = store<S>((C)op((C)load(px[i])));
  });
}

template <typename C> C sigmoid(C x) { return x >= 0 ? C(1) / (C(1) + std::exp(-x)) : std::exp(x) / (C(1) + std::exp(x)); }
template <typename C> C gelu_erf(C x) { return C(0.5) * x * (C(1) + std::erf(x * C(0.70710678118654752440))); }
template <typename C> C gelu_tanh(C x) {
  return C(0.5) * x * (C(1) + std::tanh(C(0.7978845608028654) * (x + C(0.044715) * x * x * x)));
}

// com.microsoft FastGelu / Gelu with their optional bias input (broadcast over the last axis): gelu(x + bias),
// the sum rounded to the storage type first (as an Add node before the activation would).
void biased_gelu(KernelContext& ctx, bool tanh_approx) {
  const Tensor& x = ctx.input(0);
  const Tensor& b = ctx.input(1);
  OGX_CHECK(b.dtype() == x.dtype() && x.rank() >= 1 && b.numel() == x.shape().back(), ctx.node().describe(),
            ": bias must hold the input's last dim (", x.rank() ? x.shape().back() : 0, ") of its dtype");
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  dispatch_float(x.dtype(), ctx.node().op_type.c_str(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = typename Compute<S>::type;
    const S* px = x.data<S>();
    const S* pb = b.data<S>();
    S* py = y.data<S>();
    int64_t D = b.numel();
    for (int64_t i = 0; i < x.numel(); i++) {
      C v = (C)load(store<S>((C)load(px[i]) + (C)load(pb[i % D])));
      py[i] = store<S>(tanh_approx ? gelu_tanh(v) : gelu_erf(v));
    }
  });
}

#define FLOAT_OP(NAME, EXPR) r.add_fn("", NAME, [](KernelContext& ctx) { unary_float(ctx, [](auto x) { return EXPR; }); })

void cast_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t to = ctx.node().attr_int("to", 0);
  OGX_CHECK(dtype_known((int32_t)to) && to != (int)DType::string, ctx.node().describe(), ": unsupported target type ", to);
  DType dt = (DType)to;
  Tensor& y = ctx.output(0, dt, x.shape());
  if (dt == x.dtype()) {
    if (y.raw() != x.raw()) std::memcpy(y.raw(), x.raw(), x.bytes());
    return;
  }
  dispatch_all(x.dtype(), "Cast", [&](auto in_tag) {
    using SI = typename decltype(in_tag)::type;
    dispatch_all(dt, "Cast", [&](auto out_tag) {
      using SO = typename decltype(out_tag)::type;
      using CO = typename Compute<SO>::type;
      const SI* px = x.data<SI>();
      SO* py = y.data<SO>();
      for (int64_t i = 0; i < x.numel(); i++) {
        auto v = load(px[i]);
        if constexpr (std::is_same_v<CO, bool>) py[i] = v != 0;
        else if constexpr (std::is_floating_point_v<decltype(v)> && std::is_integral_v<CO>)
          py[i] = std::isfinite(v) ? store<SO>((CO)v) : SO(0);
        else py[i] = store<SO>((CO)v);
      }
    });
  });
}

}  // namespace

void register_unary(KernelRegistry& r) {
  r.add_fn("", "Sigmoid", [](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::f32) return unary_float(ctx, [](auto v) { return sigmoid(v); });
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    const float* px = x.data<float>();
    float* py = y.data<float>();
    ctx.pool().parallel_for(x.numel(), 1 << 14, [&](int64_t b, int64_t e) { sigmoid_f32(px + b, py + b, e - b); });
  });
  FLOAT_OP("Tanh", std::tanh(x));
  FLOAT_OP("Exp", std::exp(x));
  FLOAT_OP("Log", std::log(x));
  FLOAT_OP("Sqrt", std::sqrt(x));
  FLOAT_OP("Reciprocal", decltype(x)(1) / x);
  FLOAT_OP("Erf", std::erf(x));
  FLOAT_OP("Sin", std::sin(x));
  FLOAT_OP("Cos", std::cos(x));
  FLOAT_OP("Floor", std::floor(x));
  FLOAT_OP("Ceil", std::ceil(x));
  FLOAT_OP("Round", std::nearbyint(x));
  FLOAT_OP("Softplus", x > 20 ? x : std::log1p(std::exp(x)));
  FLOAT_OP("Softsign", x / (decltype(x)(1) + std::abs(x)));
  FLOAT_OP("Silu", x * sigmoid(x));
  r.add_fn("com.microsoft", "FastGelu", [](KernelContext& ctx) {
    if (ctx.has_input(1)) return biased_gelu(ctx, true);
    unary_float(ctx, [](auto x) { return gelu_tanh(x); });
  });
  r.add_fn("com.microsoft", "Gelu", [](KernelContext& ctx) {
    if (ctx.has_input(1)) return biased_gelu(ctx, false);
    unary_float(ctx, [](auto x) { return gelu_erf(x); });
  });
  r.add_fn("com.microsoft", "QuickGelu", [](KernelContext& ctx) {
    float alpha = ctx.node().attr_float("alpha", 1.702f);
    unary_float(ctx, [alpha](auto x) { return x * sigmoid(decltype(x)(alpha) * x); });
  });
  r.add_fn("", "Gelu", [](KernelContext& ctx) {
    bool tanh_approx = ctx.node().attr_string("approximate", "none") == "tanh";
    if (tanh_approx) unary_float(ctx, [](auto x) { return gelu_tanh(x); });
    else unary_float(ctx, [](auto x) { return gelu_erf(x); });
  });
  r.add_fn("", "LeakyRelu", [](KernelContext& ctx) {
    float a = ctx.node().attr_float("alpha", 0.01f);
    unary_float(ctx, [a](auto x) { return x >= 0 ? x : decltype(x)(a) * x; });
  });
  r.add_fn("", "HardSigmoid", [](KernelContext& ctx) {
    float a = ctx.node().attr_float("alpha", 0.2f), b = ctx.node().attr_float("beta", 0.5f);
    unary_float(ctx, [a, b](auto x) {
      using C = decltype(x);
      return std::max(C(0), std::min(C(1), C(a) * x + C(b)));
    });
  });
  r.add_fn("", "Relu", [](KernelContext& ctx) { unary_numeric(ctx, [](auto x) { return x > 0 ? x : decltype(x)(0); }); });
  r.add_fn("", "Neg", [](KernelContext& ctx) { unary_numeric(ctx, [](auto x) { return -x; }); });
  r.add_fn("", "Abs", [](KernelContext& ctx) {
    unary_numeric(ctx, [](auto x) {
      if constexpr (std::is_unsigned_v<decltype(x)>) return x;
      else return x < 0 ? -x : x;
    });
  });
  r.add_fn("", "Sign", [](KernelContext& ctx) {
    unary_numeric(ctx, [](auto x) { return decltype(x)((x > 0) - (x < 0)); });
  });
  r.add_fn("", "Identity", [](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    std::memcpy(y.raw(), x.raw(), x.bytes());
  });
  r.add_fn("", "Not", [](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    OGX_CHECK(x.dtype() == DType::boolean, ctx.node().describe(), ": needs bool input");
    Tensor& y = ctx.output(0, DType::boolean, x.shape());
    for (int64_t i = 0; i < x.numel(); i++) y.data<bool>()[i] = !x.data<bool>()[i];
  });
  r.add_fn("", "IsNaN", [](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0, DType::boolean, x.shape());
    for (int64_t i = 0; i < x.numel(); i++) y.data<bool>()[i] = std::isnan(x.get_f64(i));
  });
  r.add_fn("", "Clip", [](KernelContext& ctx) {
    double lo = -INFINITY, hi = INFINITY;
    if (ctx.node().has_attr("min")) lo = ctx.node().attr_float("min", 0);
    if (ctx.node().has_attr("max")) hi = ctx.node().attr_float("max", 0);
    if (ctx.has_input(1)) lo = ctx.input(1).get_f64(0);
    if (ctx.has_input(2)) hi = ctx.input(2).get_f64(0);
    unary_numeric(ctx, [lo, hi](auto x) {
      using C = decltype(x);
      double v = (double)x;
      return v < lo ? C(lo) : v > hi ? C(hi) : x;
    });
  });
  r.add_fn("", "Cast", cast_kernel);
}

}  // namespace ogx::cpu
