// Shared by the contrib-op kernel tests: seeded random tensors rounded to their dtype, float64 comparison with
// tolerances, and the float64 rotary reference.
//
// The references see exactly the values the kernel is fed (fp16 inputs are rounded before both use them) and keep
// every intermediate in float64; the tolerances therefore only cover the kernel's own rounding:
//   fp32: fp32 accumulation over at most a few hundred terms of magnitude <= ~2  -> 2e-5 absolute (+1e-5 relative).
//   fp16: one rounding of each stored result (half ulp = 2^-11 relative) plus, in attention, the rotated Q/K that ONNX
//         Runtime also stores in fp16 (score error ~1e-3)                          -> 4e-3 absolute (+2e-3 relative).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "providers/cpu/tests/kernel_test_util.h"

namespace ogx::test::contrib {

struct Tol {
  double atol, rtol;
};
inline Tol tol_for(DType dt) { return dt == DType::f16 ? Tol{4e-3, 2e-3} : Tol{2e-5, 1e-5}; }

inline double round_to(DType dt, double v) {
  return dt == DType::f16 ? (double)f16_to_f32(f32_to_f16((float)v)) : (double)(float)v;
}

// Seeded random values rounded to dt, and the tensor holding exactly them.
struct Buf {
  std::vector<double> v;
  Tensor t;
};
inline Buf random_buf(std::mt19937& rng, DType dt, const Shape& s, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> d(lo, hi);
  Buf b;
  b.v.resize((size_t)shape_numel(s));
  for (auto& x : b.v) x = round_to(dt, d(rng));
  b.t = make_tensor(dt, s, b.v);
  return b;
}

// Expects |got - ref| <= atol + rtol |ref| elementwise over the positions where `use(i)` holds.
template <typename Use>
void expect_close(const Tensor& got, const std::vector<double>& ref, Tol tol, const std::string& what, Use use) {
  ASSERT_EQ(got.numel(), (int64_t)ref.size()) << what;
  int bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < got.numel(); i++) {
    if (!use(i)) continue;
    double g = got.get_f64(i), r = ref[(size_t)i], e = std::fabs(g - r);
    worst = std::max(worst, e);
    if (!(e <= tol.atol + tol.rtol * std::fabs(r))) {
      if (bad++ < 5) ADD_FAILURE() << what << ": element " << i << " got " << g << " want " << r;
    }
  }
  EXPECT_EQ(bad, 0) << what << " (max abs error " << worst << ")";
}
inline void expect_close(const Tensor& got, const std::vector<double>& ref, Tol tol, const std::string& what) {
  expect_close(got, ref, tol, what, [](int64_t) { return true; });
}

// Rotates x[0..rot) of one head (float64) by the cache row of position p. interleaved: pairs (2i, 2i+1), else halves.
inline void rotate_ref(double* x, int64_t rot, const std::vector<double>& cosc, const std::vector<double>& sinc, int64_t p,
                bool interleaved) {
  int64_t half = rot / 2;
  for (int64_t i = 0; i < half; i++) {
    int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
    double c = cosc[(size_t)(p * half + i)], s = sinc[(size_t)(p * half + i)];
    double x1 = x[a], x2 = x[b];
    x[a] = x1 * c - x2 * s;
    x[b] = x2 * c + x1 * s;
  }
}

// cos/sin caches [max_pos, half] of a real rotation (random frequencies), rounded to dt.
inline void make_caches(std::mt19937& rng, DType dt, int64_t max_pos, int64_t half, Buf& cosb, Buf& sinb) {
  std::uniform_real_distribution<double> f(0.01, 1.0);
  std::vector<double> freq((size_t)half);
  for (auto& x : freq) x = f(rng);
  cosb.v.resize((size_t)(max_pos * half));
  sinb.v.resize(cosb.v.size());
  for (int64_t p = 0; p < max_pos; p++)
    for (int64_t i = 0; i < half; i++) {
      cosb.v[(size_t)(p * half + i)] = round_to(dt, std::cos(p * freq[(size_t)i]));
      sinb.v[(size_t)(p * half + i)] = round_to(dt, std::sin(p * freq[(size_t)i]));
    }
  cosb.t = make_tensor(dt, {max_pos, half}, cosb.v);
  sinb.t = make_tensor(dt, {max_pos, half}, sinb.v);
}

}  // namespace ogx::test::contrib
