// The binary elementwise loop shared by the arithmetic, comparison and variadic ops: out = op(a, b) with numpy
// broadcasting, each element loaded into its compute type (f16/bf16: float) and stored as Out.
#pragma once
#include <array>
#include <vector>

#include "providers/cpu/broadcast.h"
#include "providers/cpu/type_dispatch.h"

namespace ogx::cpu {

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

}  // namespace ogx::cpu
