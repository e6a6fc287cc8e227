// The vectorized sigmoid (ONNX Runtime's MLAS logistic, vec_math.h): the AVX2 path gives the scalar twin's bits
// (lengths that leave a scalar tail), both within 2e-7 absolute of the float64 sigmoid (MLAS's rational
// approximation is accurate absolutely, not relatively: it reaches 0 in the far negative tail), NaN stays NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "providers/cpu/vec_math.h"

TEST(VecMath, SigmoidMatchesScalarAndFloat64) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-100.f, 100.f), n(-4.f, 4.f);
  for (int64_t len : {1, 7, 8, 9, 1000, 4099}) {
    std::vector<float> x((size_t)len), y((size_t)len), want((size_t)len);
    for (size_t i = 0; i < x.size(); i++) x[i] = i % 2 ? u(rng) : n(rng);
    x[0] = 0.f;
    ogx::cpu::sigmoid_f32(x.data(), y.data(), len);
    ogx::cpu::sigmoid_f32_scalar(x.data(), want.data(), len);
    for (size_t i = 0; i < x.size(); i++) {
      ASSERT_EQ(y[i], want[i]) << "x=" << x[i];
      ASSERT_NEAR(y[i], 1.0 / (1.0 + std::exp(-(double)x[i])), 2e-7) << "x=" << x[i];
    }
  }
  float nan = std::nanf(""), out = 0;
  ogx::cpu::sigmoid_f32_scalar(&nan, &out, 1);
  EXPECT_TRUE(std::isnan(out));
}

// Attention's row loops (simd.h): dot_rows_f32 gives exactly dot_f32(q, k_t) * alpha per row and weighted_rows_f32
// exactly the axpy_rows(1, ...) loop, for head sizes 8..128 and row counts that leave a tail of fewer than 8 rows;
// both within rounding of the scalar twins.
#include "providers/cpu/simd.h"

TEST(VecMath, AttentionRowLoopsMatchTheOneRowCalls) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (int64_t h : {8, 24, 32, 64, 80, 128})
    for (int64_t n : {1, 7, 8, 9, 37, 130}) {
      std::vector<float> q((size_t)h), k((size_t)(n * h)), p((size_t)n), acc((size_t)h), want_acc((size_t)h);
      for (auto& v : q) v = u(rng);
      for (auto& v : k) v = u(rng);
      for (auto& v : p) v = std::fabs(u(rng));
      for (size_t j = 0; j < acc.size(); j++) acc[j] = want_acc[j] = u(rng);
      std::vector<float> got((size_t)n), scalar((size_t)n);
      const float alpha = 0.125f + u(rng) * 0.01f;
      ogx::cpu::dot_rows_f32(q.data(), k.data(), n, h, alpha, got.data());
      ogx::cpu::dot_rows_f32_scalar(q.data(), k.data(), n, h, alpha, scalar.data());
      for (int64_t t = 0; t < n; t++) {
        ASSERT_EQ(got[t], ogx::cpu::dot_f32(q.data(), k.data() + t * h, h) * alpha) << "h=" << h << " n=" << n;
        ASSERT_NEAR(got[t], scalar[t], 1e-4f * (float)h) << "h=" << h << " n=" << n;
      }
      std::vector<float> scalar_acc = acc;
      ogx::cpu::weighted_rows_f32(p.data(), k.data(), n, h, acc.data());
      ogx::cpu::weighted_rows_f32_scalar(p.data(), k.data(), n, h, scalar_acc.data());
      for (int64_t t = 0; t < n; t++) {
        float* a = want_acc.data();
        ogx::cpu::axpy_rows(1, &p[(size_t)t], k.data() + t * h, &a, h);
      }
      for (int64_t j = 0; j < h; j++) {
        ASSERT_EQ(acc[j], want_acc[j]) << "h=" << h << " n=" << n << " j=" << j;
        ASSERT_NEAR(acc[j], scalar_acc[j], 1e-4f * (float)n) << "h=" << h << " n=" << n;
      }
    }
}

// The softmax's exp: within 2 ulp of std::exp on [-87, 0], exp(-87) below, NaN kept; tails of fewer than 8.
TEST(VecMath, ExpNonPositiveMatchesStdExp) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-90.f, 0.f), n(-3.f, 0.f);
  for (int64_t len : {1, 7, 8, 9, 1000, 4099}) {
    std::vector<float> x((size_t)len), y((size_t)len), s((size_t)len);
    for (size_t i = 0; i < x.size(); i++) x[i] = i % 2 ? u(rng) : n(rng);
    x[0] = 0.f;
    if (len > 3) x[3] = std::nanf("");
    ogx::cpu::exp_nonpos_f32(x.data(), y.data(), len);
    ogx::cpu::exp_nonpos_f32_scalar(x.data(), s.data(), len);
    for (size_t i = 0; i < x.size(); i++) {
      if (std::isnan(x[i])) {
        ASSERT_TRUE(std::isnan(y[i]) && std::isnan(s[i]));
        continue;
      }
      const float want = std::exp(std::max(x[i], -87.f));
      ASSERT_NEAR(y[i], want, want * 2.4e-7f) << "x=" << x[i];
      ASSERT_EQ(s[i], want);
    }
    ASSERT_EQ(y[0], 1.f);
  }
}
