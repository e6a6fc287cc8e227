// Gather (embedding lookup and shape picking), GatherElements, GatherND.
#include <cstring>

#include "providers/cpu/broadcast.h"
#include "providers/cpu/cpu_ops.h"
#include "providers/cpu/type_dispatch.h"

namespace ogx::cpu {
namespace {

void gather_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  int64_t r = x.rank();
  OGX_CHECK(r >= 1, ctx.node().describe(), ": data must have rank >= 1");
  int64_t axis = ctx.node().attr_int("axis", 0);
  if (axis < 0) axis += r;
  OGX_CHECK(axis >= 0 && axis < r, ctx.node().describe(), ": bad axis");
  Shape s(x.shape().begin(), x.shape().begin() + axis);
  s.insert(s.end(), idx.shape().begin(), idx.shape().end());
  s.insert(s.end(), x.shape().begin() + axis + 1, x.shape().end());
  Tensor& y = ctx.output(0, x.dtype(), s);
  int64_t outer = 1, inner = 1, d = x.shape()[axis];
  for (int64_t i = 0; i < axis; i++) outer *= x.shape()[i];
  for (int64_t i = axis + 1; i < r; i++) inner *= x.shape()[i];
  size_t row = (size_t)inner * dtype_size(x.dtype());
  int64_t n = idx.numel();
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < n; j++) {
      int64_t k = idx.get_i64(j);
      if (k < 0) k += d;
      OGX_CHECK(k >= 0 && k < d, ctx.node().describe(), ": index ", idx.get_i64(j), " out of range [", -d, ", ", d,
                ")");
      std::memcpy((char*)y.raw() + (o * n + j) * row, (const char*)x.raw() + (o * d + k) * row, row);
    }
}

void gather_elements_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  int64_t r = x.rank();
  int64_t axis = ctx.node().attr_int("axis", 0);
  if (axis < 0) axis += r;
  OGX_CHECK(axis >= 0 && axis < r && idx.rank() == r, ctx.node().describe(), ": bad axis or index rank");
  Tensor& y = ctx.output(0, x.dtype(), idx.shape());
  std::vector<int64_t> xs = contiguous_strides(x.shape());
  size_t es = dtype_size(x.dtype());
  for (int64_t i = 0; i < idx.numel(); i++) {
    int64_t rem = i, off = 0;
    for (int64_t d = r - 1; d >= 0; d--) {
      int64_t c = rem % idx.shape()[d];
      rem /= idx.shape()[d];
      if (d == axis) {
        c = idx.get_i64(i);
        if (c < 0) c += x.shape()[d];
        OGX_CHECK(c >= 0 && c < x.shape()[d], ctx.node().describe(), ": index out of range");
      }
      off += c * xs[d];
    }
    std::memcpy((char*)y.raw() + i * es, (const char*)x.raw() + off * es, es);
  }
}

// GatherND (batch_dims b): data [B.., D_b .. D_{b+k-1}, rest..], indices int64 [B.., J.., k];
// out[B.., J.., rest..] = data[B.., idx[B.., J.., :], rest..].
void gather_nd_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  const Node& n = ctx.node();
  int64_t b = n.attr_int("batch_dims", 0);
  OGX_CHECK(idx.dtype() == DType::i64, n.describe(), ": indices must be int64");
  OGX_CHECK(idx.rank() >= 1 && x.rank() >= 1, n.describe(), ": data and indices must have rank >= 1");
  int64_t k = idx.shape().back();
  OGX_CHECK(b >= 0 && b < idx.rank() && b + k <= x.rank() && k >= 1, n.describe(), ": index tuples of ", k,
            " with batch_dims ", b, " do not fit data ", shape_str(x.shape()));
  int64_t batches = 1, inner = 1;
  for (int64_t d = 0; d < b; d++) {
    OGX_CHECK(idx.shape()[d] == x.shape()[d], n.describe(), ": batch dim ", d, " differs between data and indices");
    batches *= x.shape()[d];
  }
  for (int64_t d = b + k; d < x.rank(); d++) inner *= x.shape()[d];
  Shape s(idx.shape().begin(), idx.shape().end() - 1);
  s.insert(s.end(), x.shape().begin() + b + k, x.shape().end());
  Tensor& y = ctx.output(0, x.dtype(), s);
  std::vector<int64_t> xs = contiguous_strides(x.shape());
  int64_t tuples = idx.numel() / k, per_batch = batches ? tuples / batches : 0;
  int64_t batch_stride = batches ? x.numel() / batches : 0;
  size_t row = (size_t)inner * dtype_size(x.dtype());
  const int64_t* pi = idx.data<int64_t>();
  for (int64_t t = 0; t < tuples; t++) {
    int64_t off = (per_batch ? t / per_batch : 0) * batch_stride;
    for (int64_t q = 0; q < k; q++) {
      int64_t dim = x.shape()[b + q], v = pi[t * k + q];
      if (v < 0) v += dim;
      OGX_CHECK(v >= 0 && v < dim, n.describe(), ": index ", pi[t * k + q], " out of range for dim ", dim);
      off += v * xs[b + q];
    }
    std::memcpy((char*)y.raw() + t * row, (const char*)x.raw() + off * dtype_size(x.dtype()), row);
  }
}

}  // namespace

void register_gather(KernelRegistry& r) {
  r.add_fn("", "GatherND", gather_nd_kernel);
  r.add_fn("", "Gather", gather_kernel);
  r.add_fn("", "GatherElements", gather_elements_kernel);
}

}  // namespace ogx::cpu
