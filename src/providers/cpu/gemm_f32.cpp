// y[M,N] = a[M,K] x b[K,N] in fp32 with b stored as fp32, fp16 or bf16 (row-major, as MatMul and Gemm hold them):
// a register-tiled kernel — 4 rows x 16 columns of y kept in 8 AVX2 accumulators while k runs over all of K, so y
// is written once instead of once per k as the axpy form did; a single row (decode) streams B row by row instead.
// Columns are split between threads in strips of 64.
// Every output is the same ordered fp32 sum over k (one fused multiply-add per k) on every path, so results do not
// depend on the thread count; the scalar twin (no AVX2, or SIMD disabled) uses the same order with fmaf.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "providers/cpu/gemm_loads.h"
#include "providers/cpu/matmul.h"
#include "providers/cpu/simd.h"

namespace ogx::cpu {

namespace {

using gemm::load8;
using gemm::to_f;

constexpr int64_t kCols = 64;  // columns of one strip (one thread's unit of work)

// y[r][n] for rows [0, R) and columns [n0, n1) of one strip, scalar.
template <typename S>
void strip_scalar(int R, const float* a, int64_t K, const S* b, int64_t N, float* y, int64_t n0, int64_t n1) {
  for (int r = 0; r < R; r++)
    for (int64_t n = n0; n < n1; n++) {
      float s = 0.f;
      for (int64_t k = 0; k < K; k++) s = std::fmaf(a[r * K + k], to_f(b[k * N + n]), s);
      y[r * N + n] = s;
    }
}

// y[r][n0 .. n0 + 8 * W) for rows [0, R): R * W accumulators, enough independent chains to hide the FMA latency.
template <typename S, int R, int W>
OGX_GEMM_AVX2 void block_avx2(const float* a, int64_t K, const S* b, int64_t N, float* y, int64_t n0) {
  __m256 acc[R][W];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++)
#pragma GCC unroll 8
    for (int w = 0; w < W; w++) acc[r][w] = _mm256_setzero_ps();
  const S* bp = b + n0;
  for (int64_t k = 0; k < K; k++, bp += N) {
    __m256 bv[W];
#pragma GCC unroll 8
    for (int w = 0; w < W; w++) bv[w] = load8(bp + 8 * w);
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      const __m256 av = _mm256_broadcast_ss(a + r * K + k);
#pragma GCC unroll 8
      for (int w = 0; w < W; w++) acc[r][w] = _mm256_fmadd_ps(av, bv[w], acc[r][w]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; r++)
#pragma GCC unroll 8
    for (int w = 0; w < W; w++) _mm256_storeu_ps(y + r * N + n0 + 8 * w, acc[r][w]);
}

// Rows [0, R) x columns [n0, min(N, n0 + kCols)): blocks as wide as the row count allows, scalar for a tail under 16.
template <typename S>
void strip_rows(int R, const float* a, int64_t K, const S* b, int64_t N, float* y, int64_t n0, bool avx2) {
  const int64_t n1 = std::min(N, n0 + kCols);
  if (!avx2) return strip_scalar(R, a, K, b, N, y, n0, n1);
  int64_t n = n0;
  for (; n + 16 <= n1; n += 16) {
    switch (R) {
      case 4: block_avx2<S, 4, 2>(a, K, b, N, y, n); break;
      case 3: block_avx2<S, 3, 2>(a, K, b, N, y, n); break;
      case 2: block_avx2<S, 2, 2>(a, K, b, N, y, n); break;
      default: block_avx2<S, 1, 2>(a, K, b, N, y, n); break;
    }
  }
  if (n < n1) strip_scalar(R, a, K, b, N, y, n, n1);
}

// One row: y[n0, n1) = a x b[:, n0, n1), B read row after row (4 rows per pass over y[n0, n1), which stays in
// L1) so the hardware prefetcher sees 4 sequential streams instead of one strided one. Same per-output order of
// fused multiply-adds as the blocks and the scalar twin.
template <typename S>
OGX_GEMM_AVX2 void gemv_avx2(const float* a, int64_t K, const S* b, int64_t N, float* y, int64_t n0, int64_t n1) {
  const int64_t nv = n0 + (n1 - n0) / 8 * 8;
  for (int64_t n = n0; n < nv; n += 8) _mm256_storeu_ps(y + n, _mm256_setzero_ps());
  for (int64_t k0 = 0; k0 < K; k0 += 4) {
    const int kk = (int)std::min<int64_t>(4, K - k0);
    __m256 av[4];
    for (int i = 0; i < kk; i++) av[i] = _mm256_broadcast_ss(a + k0 + i);
    const S* bk = b + k0 * N;
    for (int64_t n = n0; n < nv; n += 8) {
      __m256 acc = _mm256_loadu_ps(y + n);
      for (int i = 0; i < kk; i++) acc = _mm256_fmadd_ps(av[i], load8(bk + i * N + n), acc);
      _mm256_storeu_ps(y + n, acc);
    }
  }
  if (nv < n1) strip_scalar(1, a, K, b, N, y, nv, n1);
}

}  // namespace

template <typename S>
void gemm_f32acc(const float* a, const S* b, float* y, int64_t M, int64_t K, int64_t N, ThreadPool& pool) {
  const bool avx2 = cpu_has_avx2() && simd_enabled();
  const int64_t strips = (N + kCols - 1) / kCols;
  if (M == 1) {
    pool.parallel_for_cost(strips, (double)(K * kCols), [&](int64_t s0, int64_t s1) {
      const int64_t n0 = s0 * kCols, n1 = std::min(N, s1 * kCols);
      if (avx2) gemv_avx2(a, K, b, N, y, n0, n1);
      else strip_scalar(1, a, K, b, N, y, n0, n1);
    });
    return;
  }
  pool.parallel_for_cost(strips, (double)(M * K * kCols), [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; s++)
      for (int64_t m0 = 0; m0 < M; m0 += 4) {
        const int R = (int)std::min<int64_t>(4, M - m0);
        strip_rows(R, a + m0 * K, K, b, N, y + m0 * N, s * kCols, avx2);
      }
  });
}

template void gemm_f32acc<float>(const float*, const float*, float*, int64_t, int64_t, int64_t, ThreadPool&);
template void gemm_f32acc<f16_t>(const float*, const f16_t*, float*, int64_t, int64_t, int64_t, ThreadPool&);
template void gemm_f32acc<bf16_t>(const float*, const bf16_t*, float*, int64_t, int64_t, int64_t, ThreadPool&);

}  // namespace ogx::cpu
