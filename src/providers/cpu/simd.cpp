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
}  // namespace

bool cpu_has_avx2() {
  static const bool v = detect_avx2();
  return v;
}

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
