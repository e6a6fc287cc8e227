// Binary arithmetic (Add, Sub, Mul, Div, Mod, Pow) with numpy broadcasting. f16/bf16 compute in float. Comparisons
// and logic: elementwise_compare.cpp; Min/Max/Sum/Mean and Where: elementwise_variadic.cpp.
#include <cmath>

#include "providers/cpu/binary_apply.h"
#include "providers/cpu/cpu_ops.h"

namespace ogx::cpu {
namespace {

template <typename OpFactory>
void add_arith(KernelRegistry& r, const std::string& name, OpFactory make_op) {
  r.add_fn("", name, [name, make_op](KernelContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    OGX_CHECK(a.dtype() == b.dtype(), ctx.node().describe(), ": input types differ (", dtype_name(a.dtype()), " vs ",
              dtype_name(b.dtype()), ")");
    Shape s = broadcast_shapes({&a.shape(), &b.shape()}, ctx.node().describe());
    Tensor& out = ctx.output(0, a.dtype(), s);
    dispatch_numeric(a.dtype(), name.c_str(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      binary_apply<S, S>(a, b, out, make_op(tag));
    });
  });
}

template <typename T>
T int_pow(T base, T exp) {
  if (exp < 0) return base == 1 ? 1 : 0;
  T r = 1;
  while (exp-- > 0) r *= base;
  return r;
}

// Pow: exponent may have another type than the base; it is converted to the base type.
void pow_kernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  Tensor b = ctx.input(1);
  if (b.dtype() != a.dtype()) {
    Tensor c(a.dtype(), b.shape());
    dispatch_numeric(a.dtype(), "Pow", [&](auto tag) {
      using S = typename decltype(tag)::type;
      for (int64_t i = 0; i < b.numel(); i++) c.data<S>()[i] = store<S>((typename Compute<S>::type)b.get_f64(i));
    });
    b = c;
  }
  Shape s = broadcast_shapes({&a.shape(), &b.shape()}, ctx.node().describe());
  Tensor& out = ctx.output(0, a.dtype(), s);
  dispatch_numeric(a.dtype(), "Pow", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = typename Compute<S>::type;
    binary_apply<S, S>(a, b, out, [](C x, C y) -> C {
      if constexpr (std::is_floating_point_v<C>) return std::pow(x, y);
      else return int_pow<C>(x, y);
    });
  });
}

}  // namespace

void register_elementwise(KernelRegistry& r) {
  add_arith(r, "Add", [](auto) { return [](auto x, auto y) { return x + y; }; });
  add_arith(r, "Sub", [](auto) { return [](auto x, auto y) { return x - y; }; });
  add_arith(r, "Mul", [](auto) { return [](auto x, auto y) { return x * y; }; });
  add_arith(r, "Div", [](auto tag) {
    using C = typename Compute<typename decltype(tag)::type>::type;
    return [](C x, C y) -> C {
      if constexpr (std::is_integral_v<C>) {
        if (y == 0) throw_error("Div: integer division by zero");
      }
      return x / y;
    };
  });
  r.add_fn("", "Mod", [](KernelContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    bool fmod_mode = ctx.node().attr_int("fmod", 0) != 0;
    Shape s = broadcast_shapes({&a.shape(), &b.shape()}, ctx.node().describe());
    Tensor& out = ctx.output(0, a.dtype(), s);
    dispatch_numeric(a.dtype(), "Mod", [&](auto tag) {
      using S = typename decltype(tag)::type;
      using C = typename Compute<S>::type;
      binary_apply<S, S>(a, b, out, [fmod_mode](C x, C y) -> C {
        if constexpr (std::is_floating_point_v<C>) {
          C m = std::fmod(x, y);
          if (!fmod_mode && m != 0 && ((m < 0) != (y < 0))) m += y;
          return m;
        } else {
          if (y == 0) throw_error("Mod: integer division by zero");
          C m = x % y;
          if (!fmod_mode && m != 0 && ((m < 0) != (y < 0))) m += y;
          return m;
        }
      });
    });
  });
  r.add_fn("", "Pow", pow_kernel);
}

}  // namespace ogx::cpu
