// Vectorized transcendental functions of fp32 arrays (AVX2 with a scalar twin giving the same bits): the logistic
// sigmoid as ONNX Runtime computes it (MLAS's rational approximation on [-18, 18], clamped outside; within 2e-7
// absolute of the true sigmoid over [-100, 100], tests/vec_math_test.cpp).
#pragma once
#include <cstdint>

namespace ogx::cpu {

// y[i] = exp(x[i]) for x[i] <= 0 (a softmax's exp(score - max)), within 2 ulp of std::exp down to -87 and
// exp(-87) below; NaN stays NaN. y may alias x. x[i] > 0 is outside the contract.
void exp_nonpos_f32(const float* x, float* y, int64_t n);
void exp_nonpos_f32_scalar(const float* x, float* y, int64_t n);

// y[i] = 1 / (1 + exp(-x[i])); y may alias x.
void sigmoid_f32(const float* x, float* y, int64_t n);
void sigmoid_f32_scalar(const float* x, float* y, int64_t n);

}  // namespace ogx::cpu
