// Vectorized transcendental functions of fp32 arrays (AVX2 with a scalar twin): exp by range reduction to
// [-ln2/2, ln2/2] and a degree-7 polynomial (within 2 ulp of std::exp for x in [-87, 88]; below -87 it returns
// exp(-87), a normal number, where std::exp goes subnormal), and the logistic sigmoid built on it.
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
