// Binary and n-ary elementwise ops with numpy broadcasting. f16/bf16 compute in float.
#include <cmath>

#include "providers/cpu/broadcast.h"
#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/type_dispatch.h"

namespace ogx::cpu {
namespace {

template <typename S, typename Out, typename Op>
void binary_apply(const Tensor& a, const Tensor& b, Tensor& out, Op op) {
  const S* pa = a.data<S>();
  const S* pb = b.data<S>();
  Out* po = out.data<Out>();
  int64_t n = out.numel();
  if (a.shape() == b.shape()) {
    for (int64_t i = 0; i < n; i++) po[i] = store<Out>(op(load(pa[i]), load(pb[i])));
    return;
  }
  if (b.numel() == 1 && a.numel() == n) {
    auto y = load(pb[0]);
    for (int64_t i = 0; i < n; i++) po[i] = store<Out>(op(load(pa[i]), y));
    return;
  }
  std::array<std::vector<int64_t>, 2> st{broadcast_strides(a.shape(), out.shape()),
                                         broadcast_strides(b.shape(), out.shape())};
  for_each_broadcast<2>(out.shape(), st, [&](int64_t i, const std::array<int64_t, 2>& o) {
    po[i] = store<Out>(op(load(pa[o[0]]), load(pb[o[1]])));
  });
}

template <typename OpFactory>
void add_arith(KernelRegistry& r, const std::string& name, OpFactory make_op, bool allow_bool = false) {
  r.add_fn("", name, [name, make_op, allow_bool](KernelContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    OGX_CHECK(a.dtype() == b.dtype(), ctx.node().describe(), ": input types differ (", dtype_name(a.dtype()), " vs ",
              dtype_name(b.dtype()), ")");
    Shape s = broadcast_shapes({&a.shape(), &b.shape()}, ctx.node().describe());
    Tensor& out = ctx.output(0, a.dtype(), s);
    auto body = [&](auto tag) {
      using S = typename decltype(tag)::type;
      binary_apply<S, S>(a, b, out, make_op(tag));
    };
    if (allow_bool) dispatch_all(a.dtype(), name.c_str(), body);
    else dispatch_numeric(a.dtype(), name.c_str(), body);
  });
}

template <typename Op>
void add_compare(KernelRegistry& r, const std::string& name, Op op) {
  r.add_fn("", name, [name, op](KernelContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    OGX_CHECK(a.dtype() == b.dtype(), ctx.node().describe(), ": input types differ");
    Shape s = broadcast_shapes({&a.shape(), &b.shape()}, ctx.node().describe());
    Tensor& out = ctx.output(0, DType::boolean, s);
    dispatch_all(a.dtype(), name.c_str(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      binary_apply<S, bool>(a, b, out, op);
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

// Variadic Min/Max/Sum/Mean: folded pairwise.
template <typename Op>
void add_variadic(KernelRegistry& r, const std::string& name, Op op, bool mean) {
  r.add_fn("", name, [name, op, mean](KernelContext& ctx) {
    const Tensor& first = ctx.input(0);
    std::vector<const Shape*> shapes;
    for (int i = 0; i < ctx.num_inputs(); i++) {
      OGX_CHECK(ctx.input(i).dtype() == first.dtype(), ctx.node().describe(), ": input types differ");
      shapes.push_back(&ctx.input(i).shape());
    }
    Shape s = broadcast_shapes(shapes, ctx.node().describe());
    Tensor acc = Tensor(first.dtype(), s);
    dispatch_numeric(first.dtype(), name.c_str(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      using C = typename Compute<S>::type;
      Tensor ones = Tensor::zeros(first.dtype(), s);
      binary_apply<S, S>(ones, first, acc, [](C, C y) { return y; });
      for (int i = 1; i < ctx.num_inputs(); i++) binary_apply<S, S>(acc, ctx.input(i), acc, op);
      if (mean) {
        S* p = acc.data<S>();
        for (int64_t i = 0; i < acc.numel(); i++) p[i] = store<S>((C)(load(p[i]) / (C)ctx.num_inputs()));
      }
    });
    Tensor& out = ctx.output(0, first.dtype(), s);
    std::memcpy(out.raw(), acc.raw(), acc.bytes());
  });
}

void where_kernel(KernelContext& ctx) {
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  OGX_CHECK(c.dtype() == DType::boolean, ctx.node().describe(), ": condition must be bool");
  OGX_CHECK(x.dtype() == y.dtype(), ctx.node().describe(), ": X and Y types differ");
  Shape s = broadcast_shapes({&c.shape(), &x.shape(), &y.shape()}, ctx.node().describe());
  Tensor& out = ctx.output(0, x.dtype(), s);
  std::array<std::vector<int64_t>, 3> st{broadcast_strides(c.shape(), s), broadcast_strides(x.shape(), s),
                                         broadcast_strides(y.shape(), s)};
  size_t es = dtype_size(x.dtype());
  const bool* pc = c.data<bool>();
  const char* px = (const char*)x.raw();
  const char* py = (const char*)y.raw();
  char* po = (char*)out.raw();
  for_each_broadcast<3>(s, st, [&](int64_t i, const std::array<int64_t, 3>& o) {
    std::memcpy(po + i * es, pc[o[0]] ? px + o[1] * es : py + o[2] * es, es);
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
  add_arith(r, "And", [](auto) { return [](auto x, auto y) { return x && y; }; }, true);
  add_arith(r, "Or", [](auto) { return [](auto x, auto y) { return x || y; }; }, true);
  add_arith(r, "Xor", [](auto) { return [](auto x, auto y) { return (bool)x != (bool)y; }; }, true);
  add_compare(r, "Equal", [](auto x, auto y) { return x == y; });
  add_compare(r, "Less", [](auto x, auto y) { return x < y; });
  add_compare(r, "Greater", [](auto x, auto y) { return x > y; });
  add_compare(r, "LessOrEqual", [](auto x, auto y) { return x <= y; });
  add_compare(r, "GreaterOrEqual", [](auto x, auto y) { return x >= y; });
  add_variadic(r, "Min", [](auto x, auto y) { return y < x ? y : x; }, false);
  add_variadic(r, "Max", [](auto x, auto y) { return y > x ? y : x; }, false);
  add_variadic(r, "Sum", [](auto x, auto y) { return x + y; }, false);
  add_variadic(r, "Mean", [](auto x, auto y) { return x + y; }, true);
  r.add_fn("", "Where", where_kernel);
}

}  // namespace ogx::cpu
