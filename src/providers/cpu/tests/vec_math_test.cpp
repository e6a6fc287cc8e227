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
