// MatMulNBits accuracy_level 4: one row of A quantized per block of bs values to int8 the way MLAS
// QuantizeARow_CompInt8 does — amax over the block, scale = amax / 127.f, q = round_half_even(a * (127.f / amax)),
// zero-padded past K. The AVX2 twin does the same fp32 operations (one multiply, round to nearest even), so both
// give the same bytes.
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "providers/cpu/simd.h"

namespace ogx::cpu::nbits {

extern std::atomic<bool> g_force_scalar;  // matmul_nbits.cpp

namespace {

void quantize_block_scalar(const float* a, int64_t len, int64_t bs, int8_t* q, float* scale) {
  float amax = 0.f;
  for (int64_t i = 0; i < len; i++) amax = std::max(amax, std::fabs(a[i]));
  *scale = amax / 127.f;
  const float inv = amax != 0.f ? 127.f / amax : 0.f;
  for (int64_t i = 0; i < len; i++) {
    float v = std::nearbyint(a[i] * inv);  // round half to even (default rounding mode)
    v = std::min(127.f, std::max(-128.f, v));
    q[i] = (int8_t)v;
  }
  for (int64_t i = std::max<int64_t>(len, 0); i < bs; i++) q[i] = 0;
}

// A full block (len == bs, a multiple of 16).
__attribute__((target("avx2,fma"))) void quantize_block_avx2(const float* a, int64_t bs, int8_t* q, float* scale) {
  const __m256 sign = _mm256_set1_ps(-0.f);
  __m256 mx = _mm256_setzero_ps();
  for (int64_t i = 0; i < bs; i += 8) mx = _mm256_max_ps(mx, _mm256_andnot_ps(sign, _mm256_loadu_ps(a + i)));
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  const float amax = _mm_cvtss_f32(m4);
  *scale = amax / 127.f;
  const __m256 inv = _mm256_set1_ps(amax != 0.f ? 127.f / amax : 0.f);
  const __m256 lo = _mm256_set1_ps(-128.f), hi = _mm256_set1_ps(127.f);
  for (int64_t i = 0; i < bs; i += 16) {
    __m256 v0 = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(a + i), inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 v1 =
        _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(a + i + 8), inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v0 = _mm256_min_ps(hi, _mm256_max_ps(lo, v0));
    v1 = _mm256_min_ps(hi, _mm256_max_ps(lo, v1));
    const __m256i w = _mm256_packs_epi32(_mm256_cvtps_epi32(v0), _mm256_cvtps_epi32(v1));  // lanes interleaved
    const __m128i b = _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    // packs_epi32 on 256 bits interleaves 128-bit halves: b = v0[0..3] v1[0..3] v0[4..7] v1[4..7]
    _mm_storeu_si128((__m128i*)(q + i), _mm_shuffle_epi32(b, _MM_SHUFFLE(3, 1, 2, 0)));
  }
}

}  // namespace

void quantize_row_int8(const float* a, int64_t K, int64_t bs, int64_t nb, int8_t* q, float* scale) {
  const bool avx2 = cpu_has_avx2() && simd_enabled() && !g_force_scalar.load(std::memory_order_relaxed);
  for (int64_t b = 0; b < nb; b++) {
    const int64_t k0 = b * bs, len = std::min(bs, K - k0);
    if (avx2 && len == bs) quantize_block_avx2(a + k0, bs, q + k0, scale + b);
    else quantize_block_scalar(a + k0, len, bs, q + k0, scale + b);
  }
}

}  // namespace ogx::cpu::nbits
