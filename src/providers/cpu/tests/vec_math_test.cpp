// The vectorized sigmoid against the scalar formula: within 4 ulp (relative 5e-7) where the result is a normal
// number, and within 1e-37 absolutely below; lengths that leave a scalar tail.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "providers/cpu/vec_math.h"

TEST(VecMath, SigmoidMatchesScalar) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-100.f, 100.f), n(-4.f, 4.f);
  for (int64_t len : {1, 7, 8, 9, 1000, 4099}) {
    std::vector<float> x((size_t)len), y((size_t)len), want((size_t)len);
    for (size_t i = 0; i < x.size(); i++) x[i] = i % 2 ? u(rng) : n(rng);
    x[0] = 0.f;
    ogx::cpu::sigmoid_f32(x.data(), y.data(), len);
    ogx::cpu::sigmoid_f32_scalar(x.data(), want.data(), len);
    for (size_t i = 0; i < x.size(); i++)
      ASSERT_NEAR(y[i], want[i], std::fabs(want[i]) * 5e-7f + 1e-37f) << "x=" << x[i];
  }
}
