// Variadic Min, Max, Sum, Mean (numpy broadcasting over every input, folded pairwise) and Where.
#include <cstring>

#include "providers/cpu/binary_apply.h"
#include "providers/cpu/cpu_ops.h"

namespace ogx::cpu {
namespace {

// The second operand, loaded and stored like every op's result: acc = broadcast of one input, one instantiation per
// storage type for every variadic op.
struct SecondOperand {
  template <typename C>
  C operator()(C, C y) const { return y; }
};

template <typename S>
void broadcast_first(const Tensor& first, Tensor& acc) {
  Tensor zeros = Tensor::zeros(first.dtype(), acc.shape());
  binary_apply<S, S>(zeros, first, acc, SecondOperand{});
}

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
      broadcast_first<S>(first, acc);
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

void register_variadic(KernelRegistry& r) {
  add_variadic(r, "Min", [](auto x, auto y) { return y < x ? y : x; }, false);
  add_variadic(r, "Max", [](auto x, auto y) { return y > x ? y : x; }, false);
  add_variadic(r, "Sum", [](auto x, auto y) { return x + y; }, false);
  add_variadic(r, "Mean", [](auto x, auto y) { return x + y; }, true);
  r.add_fn("", "Where", where_kernel);
}

}  // namespace ogx::cpu
