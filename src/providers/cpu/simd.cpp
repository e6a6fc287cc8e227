#include "providers/cpu/simd.h"

#include <cpuid.h>
#include <immintrin.h>

#include <atomic>

// F16C (CPUID.1:ECX bit 29), read directly: clang's __builtin_cpu_supports does not know "f16c".
static bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}

namespace ogx::cpu {
namespace {
std::atomic<bool> g_simd_on{true};

bool detect_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
}

template <typename S>
void axpy_scalar_impl(int rows, const float* a, const S* x, float* const* y, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float xv;
    if constexpr (std::is_same_v<S, float>) xv = x[i];
    else xv = to_float(x[i]);
    for (int r = 0; r < rows; r++) y[r][i] += a[r] * xv;
  }
}

__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const f16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p));
}
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const bf16_t* p) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

template <typename S, int R>
__attribute__((target("avx2,fma,f16c"))) void axpy_avx2_fixed(const float* a, const S* x, float* const* y, int64_t n) {
  __m256 av[R];
  for (int r = 0; r < R; r++) av[r] = _mm256_set1_ps(a[r]);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 xv = load8(x + i);
    for (int r = 0; r < R; r++) _mm256_storeu_ps(y[r] + i, _mm256_fmadd_ps(av[r], xv, _mm256_loadu_ps(y[r] + i)));
  }
  if (i < n) {
    float* ytail[R];
    for (int r = 0; r < R; r++) ytail[r] = y[r] + i;
    axpy_scalar_impl(R, a, x + i, ytail, n - i);
  }
}

template <typename S>
void axpy_dispatch(int rows, const float* a, const S* x, float* const* y, int64_t n) {
  static const bool avx2 = detect_avx2();
  if (!avx2 || !g_simd_on.load(std::memory_order_relaxed)) return axpy_scalar_impl(rows, a, x, y, n);
  while (rows > 0) {
    int k = rows >= 4 ? 4 : rows;
    switch (k) {
      case 4: axpy_avx2_fixed<S, 4>(a, x, y, n); break;
      case 3: axpy_avx2_fixed<S, 3>(a, x, y, n); break;
      case 2: axpy_avx2_fixed<S, 2>(a, x, y, n); break;
      default: axpy_avx2_fixed<S, 1>(a, x, y, n); break;
    }
    rows -= k;
    a += k;
    y += k;
  }
}

__attribute__((target("avx2,fma"))) float dot_avx2(const float* a, const float* b, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
  float t[8];
  _mm256_storeu_ps(t, acc);
  float s = t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
  for (; i < n; i++) s += a[i] * b[i];
  return s;
}
// dot_avx2 for 8 rows at once: lane l of acc[r] sums q[i + l] * k_r[i + l] over i in steps of 8, then each row's
// lanes add left to right — an 8 x 8 transpose makes that 7 vector adds over the rows.
__attribute__((target("avx2,fma"))) void dot8_rows_avx2(const float* q, const float* k, int64_t h, float alpha,
                                                           float* out) {
  __m256 acc[8];
  for (int r = 0; r < 8; r++) acc[r] = _mm256_setzero_ps();
  for (int64_t i = 0; i + 8 <= h; i += 8) {
    const __m256 qv = _mm256_loadu_ps(q + i);
    for (int r = 0; r < 8; r++) acc[r] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k + r * h + i), acc[r]);
  }
  // transpose: t[l] holds lane l of the 8 rows
  const __m256 a0 = _mm256_unpacklo_ps(acc[0], acc[1]), a1 = _mm256_unpackhi_ps(acc[0], acc[1]);
  const __m256 a2 = _mm256_unpacklo_ps(acc[2], acc[3]), a3 = _mm256_unpackhi_ps(acc[2], acc[3]);
  const __m256 a4 = _mm256_unpacklo_ps(acc[4], acc[5]), a5 = _mm256_unpackhi_ps(acc[4], acc[5]);
  const __m256 a6 = _mm256_unpacklo_ps(acc[6], acc[7]), a7 = _mm256_unpackhi_ps(acc[6], acc[7]);
  const __m256 b0 = _mm256_shuffle_ps(a0, a2, 0x44), b1 = _mm256_shuffle_ps(a0, a2, 0xEE);
  const __m256 b2 = _mm256_shuffle_ps(a1, a3, 0x44), b3 = _mm256_shuffle_ps(a1, a3, 0xEE);
  const __m256 b4 = _mm256_shuffle_ps(a4, a6, 0x44), b5 = _mm256_shuffle_ps(a4, a6, 0xEE);
  const __m256 b6 = _mm256_shuffle_ps(a5, a7, 0x44), b7 = _mm256_shuffle_ps(a5, a7, 0xEE);
  const __m256 t0 = _mm256_permute2f128_ps(b0, b4, 0x20), t4 = _mm256_permute2f128_ps(b0, b4, 0x31);
  const __m256 t1 = _mm256_permute2f128_ps(b1, b5, 0x20), t5 = _mm256_permute2f128_ps(b1, b5, 0x31);
  const __m256 t2 = _mm256_permute2f128_ps(b2, b6, 0x20), t6 = _mm256_permute2f128_ps(b2, b6, 0x31);
  const __m256 t3 = _mm256_permute2f128_ps(b3, b7, 0x20), t7 = _mm256_permute2f128_ps(b3, b7, 0x31);
  __m256 s = _mm256_add_ps(t0, t1);
  s = _mm256_add_ps(s, t2);
  s = _mm256_add_ps(s, t3);
  s = _mm256_add_ps(s, t4);
  s = _mm256_add_ps(s, t5);
  s = _mm256_add_ps(s, t6);
  s = _mm256_add_ps(s, t7);
  _mm256_storeu_ps(out, _mm256_mul_ps(s, _mm256_set1_ps(alpha)));
}

// axpy_avx2_fixed<float, 1> over n rows with acc kept in registers (h <= 64, a multiple of 8).
template <int V>
__attribute__((target("avx2,fma"))) void weighted_rows_avx2(const float* p, const float* v, int64_t n, float* acc) {
  __m256 a[V];
  for (int i = 0; i < V; i++) a[i] = _mm256_loadu_ps(acc + 8 * i);
  for (int64_t t = 0; t < n; t++) {
    const __m256 pv = _mm256_set1_ps(p[t]);
    for (int i = 0; i < V; i++) a[i] = _mm256_fmadd_ps(pv, _mm256_loadu_ps(v + t * V * 8 + 8 * i), a[i]);
  }
  for (int i = 0; i < V; i++) _mm256_storeu_ps(acc + 8 * i, a[i]);
}
}  // namespace

void dot_rows_f32_scalar(const float* q, const float* k, int64_t n, int64_t h, float alpha, float* out) {
  for (int64_t t = 0; t < n; t++) {
    float s = 0;
    for (int64_t i = 0; i < h; i++) s += q[i] * k[t * h + i];
    out[t] = s * alpha;
  }
}

void weighted_rows_f32_scalar(const float* p, const float* v, int64_t n, int64_t h, float* acc) {
  for (int64_t t = 0; t < n; t++)
    for (int64_t j = 0; j < h; j++) acc[j] += p[t] * v[t * h + j];
}

void dot_rows_f32(const float* q, const float* k, int64_t n, int64_t h, float alpha, float* out) {
  int64_t t = 0;
  if (cpu_has_avx2() && g_simd_on.load(std::memory_order_relaxed) && h % 8 == 0)
    for (; t + 8 <= n; t += 8) dot8_rows_avx2(q, k + t * h, h, alpha, out + t);
  for (; t < n; t++) out[t] = dot_f32(q, k + t * h, h) * alpha;
}

void weighted_rows_f32(const float* p, const float* v, int64_t n, int64_t h, float* acc) {
  if (cpu_has_avx2() && g_simd_on.load(std::memory_order_relaxed) && h % 8 == 0 && h <= 128) {
    switch (h / 8) {
      case 16: return weighted_rows_avx2<16>(p, v, n, acc);
      case 8: return weighted_rows_avx2<8>(p, v, n, acc);
      case 4: return weighted_rows_avx2<4>(p, v, n, acc);
      default: break;
    }
  }
  for (int64_t t = 0; t < n; t++) {
    float* a = acc;
    axpy_rows(1, p + t, v + t * h, &a, h);
  }
}

bool cpu_has_avx2() {
  static const bool v = detect_avx2();
  return v;
}

namespace {
std::atomic<bool> g_avx512_on{true};
}  // namespace

bool cpu_has_avx512() {
  static const bool v = detect_avx2() && __builtin_cpu_supports("avx512f");
  return v && g_avx512_on.load(std::memory_order_relaxed);
}

bool set_avx512_enabled(bool on) { return g_avx512_on.exchange(on); }

bool set_simd_enabled(bool on) { return g_simd_on.exchange(on); }
bool simd_enabled() { return g_simd_on.load(std::memory_order_relaxed); }

void axpy_rows(int rows, const float* a, const float* x, float* const* y, int64_t n) { axpy_dispatch(rows, a, x, y, n); }
void axpy_rows(int rows, const float* a, const f16_t* x, float* const* y, int64_t n) { axpy_dispatch(rows, a, x, y, n); }
void axpy_rows(int rows, const float* a, const bf16_t* x, float* const* y, int64_t n) { axpy_dispatch(rows, a, x, y, n); }
void axpy_rows_scalar(int rows, const float* a, const float* x, float* const* y, int64_t n) {
  axpy_scalar_impl(rows, a, x, y, n);
}
void axpy_rows_scalar(int rows, const float* a, const f16_t* x, float* const* y, int64_t n) {
  axpy_scalar_impl(rows, a, x, y, n);
}
void axpy_rows_scalar(int rows, const float* a, const bf16_t* x, float* const* y, int64_t n) {
  axpy_scalar_impl(rows, a, x, y, n);
}

float dot_f32(const float* a, const float* b, int64_t n) {
  if (cpu_has_avx2() && g_simd_on.load(std::memory_order_relaxed)) return dot_avx2(a, b, n);
  float s = 0;
  for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

}  // namespace ogx::cpu
