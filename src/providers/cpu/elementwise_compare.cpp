// Comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual: bool out) and logic (And, Or, Xor: bool in and out).
#include "providers/cpu/binary_apply.h"
#include "providers/cpu/cpu_ops.h"

namespace ogx::cpu {
namespace {

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

// And, Or, Xor: ONNX types them bool only (one instantiation instead of one per dtype).
template <typename Op>
void add_logic(KernelRegistry& r, const std::string& name, Op op) {
  r.add_fn("", name, [op](KernelContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    OGX_CHECK(a.dtype() == DType::boolean && b.dtype() == DType::boolean, ctx.node().describe(),
              ": expects bool inputs, got ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
    Shape s = broadcast_shapes({&a.shape(), &b.shape()}, ctx.node().describe());
    Tensor& out = ctx.output(0, DType::boolean, s);
    binary_apply<bool, bool>(a, b, out, op);
  });
}

}  // namespace

void register_compare(KernelRegistry& r) {
  add_logic(r, "And", [](bool x, bool y) { return x && y; });
  add_logic(r, "Or", [](bool x, bool y) { return x || y; });
  add_logic(r, "Xor", [](bool x, bool y) { return x != y; });
  add_compare(r, "Equal", [](auto x, auto y) { return x == y; });
  add_compare(r, "Less", [](auto x, auto y) { return x < y; });
  add_compare(r, "Greater", [](auto x, auto y) { return x > y; });
  add_compare(r, "LessOrEqual", [](auto x, auto y) { return x <= y; });
  add_compare(r, "GreaterOrEqual", [](auto x, auto y) { return x >= y; });
}

}  // namespace ogx::cpu
