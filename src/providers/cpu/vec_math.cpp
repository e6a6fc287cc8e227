#include "providers/cpu/vec_math.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "providers/cpu/simd.h"

namespace ogx::cpu {

namespace {

#define OGX_AVX2 __attribute__((target("avx2,fma")))

// exp(x) for x <= 0 (attention's softmax): clamped at -87 so 2^n stays a normal number.
OGX_AVX2 inline __m256 exp_nonpos(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.f));
  const __m256 fx = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);  // x - n ln2, ln2 in two parts
  r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  const __m256i n = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(n));
}

// ONNX Runtime's logistic (MLAS, core/mlas/lib/logistic.cpp constants, x86-64 kernel LogisticKernelFma3.S): x
// clamped to [-18, 18], an odd degree-9 numerator over an even degree-10 denominator in x^2 (Horner with fused
// multiply-adds), p / q + 0.5, clamped at 0. Bit for bit the same as ONNX Runtime's Sigmoid on x86-64.
struct LogisticConstants {
  float lower = -18.0f, upper = 18.0f;
  float a9 = 4.37031012579801e-11f, a7 = 1.15627324459942e-07f, a5 = 6.08574864600143e-05f,
        a3 = 8.51377133304701e-03f, a1 = 2.48287947061529e-01f;
  float b10 = 6.10247389755681e-13f, b8 = 5.76102136993427e-09f, b6 = 6.29106785017040e-06f,
        b4 = 1.70198817374094e-03f, b2 = 1.16817656904453e-01f, b0 = 9.93151921023180e-01f;
};
constexpr LogisticConstants kL;

OGX_AVX2 void sigmoid_avx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_max_ps(_mm256_set1_ps(kL.lower), _mm256_loadu_ps(x + i));  // NaN passes through
    v = _mm256_min_ps(_mm256_set1_ps(kL.upper), v);
    const __m256 x2 = _mm256_mul_ps(v, v);
    __m256 p = _mm256_fmadd_ps(x2, _mm256_set1_ps(kL.a9), _mm256_set1_ps(kL.a7));
    p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(kL.a5));
    p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(kL.a3));
    p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(kL.a1));
    __m256 q = _mm256_fmadd_ps(x2, _mm256_set1_ps(kL.b10), _mm256_set1_ps(kL.b8));
    q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(kL.b6));
    q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(kL.b4));
    q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(kL.b2));
    q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(kL.b0));
    p = _mm256_mul_ps(v, p);
    const __m256 r = _mm256_add_ps(_mm256_div_ps(p, q), _mm256_set1_ps(0.5f));
    _mm256_storeu_ps(y + i, _mm256_max_ps(_mm256_setzero_ps(), r));
  }
  sigmoid_f32_scalar(x + i, y + i, n - i);
}

OGX_AVX2 void exp_nonpos_avx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 e = exp_nonpos(v);
    // exp_nonpos clamps NaN to -87 (vmaxps returns its second operand when one is NaN): put NaN back.
    _mm256_storeu_ps(y + i, _mm256_blendv_ps(e, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
  }
  exp_nonpos_f32_scalar(x + i, y + i, n - i);
}

}  // namespace

void exp_nonpos_f32_scalar(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = std::isnan(x[i]) ? x[i] : std::exp(std::max(x[i], -87.f));
}

void exp_nonpos_f32(const float* x, float* y, int64_t n) {
  if (cpu_has_avx2() && simd_enabled()) return exp_nonpos_avx2(x, y, n);
  exp_nonpos_f32_scalar(x, y, n);
}

void sigmoid_f32_scalar(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float v = x[i] < kL.lower ? kL.lower : x[i];  // as vmaxps/vminps: a NaN stays NaN
    v = v > kL.upper ? kL.upper : v;
    const float x2 = v * v;
    float p = std::fma(x2, kL.a9, kL.a7);
    p = std::fma(x2, p, kL.a5);
    p = std::fma(x2, p, kL.a3);
    p = std::fma(x2, p, kL.a1);
    float q = std::fma(x2, kL.b10, kL.b8);
    q = std::fma(x2, q, kL.b6);
    q = std::fma(x2, q, kL.b4);
    q = std::fma(x2, q, kL.b2);
    q = std::fma(x2, q, kL.b0);
    p = v * p;
    const float r = p / q + 0.5f;
    y[i] = r < 0.0f ? 0.0f : r;
  }
}

void sigmoid_f32(const float* x, float* y, int64_t n) {
  if (cpu_has_avx2() && simd_enabled()) return sigmoid_avx2(x, y, n);
  sigmoid_f32_scalar(x, y, n);
}

}  // namespace ogx::cpu
