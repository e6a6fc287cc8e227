// ScatterND (ai.onnx 11/13/16/18: reduction none, add, mul, max, min).
#include <algorithm>
#include <cstring>

#include "providers/cpu/broadcast.h"
#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/type_dispatch.h"

namespace ogx::cpu {
namespace {

// out = data; then for each index tuple t (in order) out[idx[t], ...] = updates[t, ...] or combined with it.
void scatter_nd_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  const Tensor& upd = ctx.input(2);
  const Node& n = ctx.node();
  std::string red = n.attr_string("reduction", "none");
  OGX_CHECK(red == "none" || red == "add" || red == "mul" || red == "max" || red == "min", n.describe(),
            ": unknown reduction '", red, "'");
  OGX_CHECK(idx.dtype() == DType::i64 && idx.rank() >= 1, n.describe(), ": indices must be int64 of rank >= 1");
  OGX_CHECK(upd.dtype() == x.dtype(), n.describe(), ": updates must have the data's dtype");
  int64_t k = idx.shape().back();
  OGX_CHECK(k >= 1 && k <= x.rank(), n.describe(), ": index tuples of ", k, " do not fit data ", shape_str(x.shape()));
  Shape want(idx.shape().begin(), idx.shape().end() - 1);
  want.insert(want.end(), x.shape().begin() + k, x.shape().end());
  OGX_CHECK(upd.shape() == want, n.describe(), ": updates ", shape_str(upd.shape()), " must be ", shape_str(want));
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  if (y.raw() != x.raw() && x.bytes()) std::memcpy(y.raw(), x.raw(), x.bytes());
  int64_t inner = 1;
  for (int64_t d = k; d < x.rank(); d++) inner *= x.shape()[d];
  int64_t tuples = idx.numel() / k;
  std::vector<int64_t> xs = contiguous_strides(x.shape());
  const int64_t* pi = idx.data<int64_t>();
  auto offset = [&](int64_t t) {
    int64_t off = 0;
    for (int64_t q = 0; q < k; q++) {
      int64_t dim = x.shape()[q], v = pi[t * k + q];
      if (v < 0) v += dim;
      OGX_CHECK(v >= 0 && v < dim, n.describe(), ": index ", pi[t * k + q], " out of range for dim ", dim);
      off += v * xs[q];
    }
    return off;
  };
  if (red == "none") {
    size_t row = (size_t)inner * dtype_size(x.dtype());
    for (int64_t t = 0; t < tuples; t++)
      std::memcpy((char*)y.raw() + offset(t) * dtype_size(x.dtype()), (const char*)upd.raw() + t * row, row);
    return;
  }
  int op = red == "add" ? 0 : red == "mul" ? 1 : red == "max" ? 2 : 3;
  dispatch_numeric(x.dtype(), "ScatterND", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = typename Compute<S>::type;
    S* py = y.data<S>();
    const S* pu = upd.data<S>();
    for (int64_t t = 0; t < tuples; t++) {
      int64_t off = offset(t);
      for (int64_t e = 0; e < inner; e++) {
        C a = (C)load(py[off + e]), b = (C)load(pu[t * inner + e]);
        C r = op == 0 ? a + b : op == 1 ? a * b : op == 2 ? std::max(a, b) : std::min(a, b);
        py[off + e] = store<S>(r);
      }
    }
  });
}

}  // namespace

void register_scatter(KernelRegistry& r) { r.add_fn("", "ScatterND", scatter_nd_kernel); }

}  // namespace ogx::cpu
