// Numpy-style broadcasting: output shape and, per input, element strides over the output's dims (0 where
// broadcast). for_each_broadcast walks the output in order, calling fn(out_index, in_offsets...).
#pragma once
#include <array>
#include <cstddef>
#include <vector>

#include "common/tensor.h"

namespace ogx::cpu {

Shape broadcast_shapes(const std::vector<const Shape*>& shapes, const std::string& what);
// Strides of `in` aligned to `out` (right-aligned, 0 on broadcast dims).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);
// Element strides of a dense row-major tensor of this shape.
std::vector<int64_t> contiguous_strides(const Shape& s);
// dst[i] = src[offset(i)] for every element i of `out`, offsets walking `strides` (elements of es bytes).
void copy_strided(const char* src, char* dst, size_t es, const Shape& out, std::vector<int64_t> strides);

// Visits every output element; offs[k] is the element offset into input k.
template <size_t N, typename Fn>
void for_each_broadcast(const Shape& out, const std::array<std::vector<int64_t>, N>& strides, Fn&& fn) {
  int64_t total = shape_numel(out);
  if (total == 0) return;
  int r = (int)out.size();
  if (r == 0) {
    std::array<int64_t, N> offs{};
    fn(0, offs);
    return;
  }
  std::vector<int64_t> idx(r, 0);
  std::array<int64_t, N> offs{};
  int64_t inner = out[r - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; k++) inner_stride[k] = strides[k][r - 1];
  for (int64_t base = 0; base < total; base += inner) {
    std::array<int64_t, N> o = offs;
    for (int64_t j = 0; j < inner; j++) {
      fn(base + j, o);
      for (size_t k = 0; k < N; k++) o[k] += inner_stride[k];
    }
    // advance the odometer over dims [0, r-1)
    for (int d = r - 2; d >= 0; d--) {
      idx[d]++;
      for (size_t k = 0; k < N; k++) offs[k] += strides[k][d];
      if (idx[d] < out[d]) break;
      for (size_t k = 0; k < N; k++) offs[k] -= strides[k][d] * out[d];
      idx[d] = 0;
    }
  }
}

}  // namespace ogx::cpu
