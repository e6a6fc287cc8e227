#include "providers/cpu/vec_math.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "providers/cpu/simd.h"

namespace ogx::cpu {

namespace {

#define OGX_AVX2 __attribute__((target("avx2,fma")))

// exp(x) for x <= 0 (the sigmoid's use): clamped at -87 so 2^n stays a normal number.
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

OGX_AVX2 void sigmoid_avx2(const float* x, float* y, int64_t n) {
  const __m256 sign = _mm256_set1_ps(-0.f), one = _mm256_set1_ps(1.f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 e = exp_nonpos(_mm256_or_ps(v, sign));  // exp(-|x|)
    const __m256 num = _mm256_blendv_ps(one, e, v);       // x < 0: e / (1 + e); else 1 / (1 + e)
    _mm256_storeu_ps(y + i, _mm256_div_ps(num, _mm256_add_ps(one, e)));
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
    const float v = x[i];
    y[i] = v >= 0 ? 1.f / (1.f + std::exp(-v)) : std::exp(v) / (1.f + std::exp(v));
  }
}

void sigmoid_f32(const float* x, float* y, int64_t n) {
  if (cpu_has_avx2() && simd_enabled()) return sigmoid_avx2(x, y, n);
  sigmoid_f32_scalar(x, y, n);
}

}  // namespace ogx::cpu
