// MatMul with a constant weight repacked into 16-column panels (matmul.h): the panel layout keeps every weight
// read sequential — decode (one row) runs 4 panels side by side, 64 columns in 8 AVX2 accumulators over all of K;
// prompts run 4 rows x 1 panel, or 8 rows x 2 panels with AVX-512 — and no output is stored before its sum over K
// is complete. Per output the sum is
// the same ordered chain of fused multiply-adds over k as gemm_f32acc and its scalar twin.
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

constexpr int64_t P = kPanelCols;

// Rows [0, R) x the P columns of panel pp (columns past N ignored), scalar.
template <typename S>
void panel_scalar(int R, const float* a, int64_t K, const S* pp, float* out /* [R][P] */) {
  for (int r = 0; r < R; r++)
    for (int64_t c = 0; c < P; c++) {
      float s = 0.f;
      for (int64_t k = 0; k < K; k++) s = std::fmaf(a[r * K + k], to_f(pp[k * P + c]), s);
      out[r * P + c] = s;
    }
}

// R rows x W panels (W consecutive panels starting at pp, each K * P values): out [R][W * P].
template <typename S, int R, int W>
OGX_GEMM_AVX2 void panels_avx2(const float* a, int64_t K, const S* pp, float* out) {
  __m256 acc[R][W][2];
#pragma GCC unroll 4
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int w = 0; w < W; w++) acc[r][w][0] = acc[r][w][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; k++) {
    __m256 b[W][2];
#pragma GCC unroll 4
    for (int w = 0; w < W; w++) {
      b[w][0] = load8(pp + w * K * P + k * P);
      b[w][1] = load8(pp + w * K * P + k * P + 8);
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      const __m256 av = _mm256_broadcast_ss(a + r * K + k);
#pragma GCC unroll 4
      for (int w = 0; w < W; w++) {
        acc[r][w][0] = _mm256_fmadd_ps(av, b[w][0], acc[r][w][0]);
        acc[r][w][1] = _mm256_fmadd_ps(av, b[w][1], acc[r][w][1]);
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int w = 0; w < W; w++) {
      _mm256_storeu_ps(out + r * W * P + w * P, acc[r][w][0]);
      _mm256_storeu_ps(out + r * W * P + w * P + 8, acc[r][w][1]);
    }
}

using PanelFn = void (*)(const float*, int64_t, const void*, float*);

template <typename S, int R, int W>
void panels_fn(const float* a, int64_t K, const void* pp, float* out) {
  panels_avx2<S, R, W>(a, K, static_cast<const S*>(pp), out);
}

template <typename S>
PanelFn pick(int R, int W) {  // (R, W) in {1} x {1..4} or {1..4} x {1}
  if (R == 1) {
    switch (W) {
      case 4: return panels_fn<S, 1, 4>;
      case 3: return panels_fn<S, 1, 3>;
      case 2: return panels_fn<S, 1, 2>;
      default: return panels_fn<S, 1, 1>;
    }
  }
  switch (R) {
    case 4: return panels_fn<S, 4, 1>;
    case 3: return panels_fn<S, 3, 1>;
    default: return panels_fn<S, 2, 1>;
  }
}

// R rows x W panels (W in {1, 2}) with AVX-512: one 16-lane vector per (row, panel), the same fused multiply-add
// chain per output as the AVX2 kernel (lane for lane), so the sums are the same bit for bit. out [R][W * P].
template <typename S, int R, int W>
OGX_GEMM_AVX512 void panels_avx512(const float* a, int64_t K, const S* pp, float* out) {
  __m512 acc[R][W];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++)
#pragma GCC unroll 2
    for (int w = 0; w < W; w++) acc[r][w] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; k++) {
    __m512 b[W];
#pragma GCC unroll 2
    for (int w = 0; w < W; w++) b[w] = gemm::load16(pp + w * K * P + k * P);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      const __m512 av = _mm512_set1_ps(a[r * K + k]);
#pragma GCC unroll 2
      for (int w = 0; w < W; w++) acc[r][w] = _mm512_fmadd_ps(av, b[w], acc[r][w]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; r++)
#pragma GCC unroll 2
    for (int w = 0; w < W; w++) _mm512_storeu_ps(out + r * W * P + w * P, acc[r][w]);
}

template <typename S, int R, int W>
void panels512_fn(const float* a, int64_t K, const void* pp, float* out) {
  panels_avx512<S, R, W>(a, K, static_cast<const S*>(pp), out);
}

template <typename S, int W>
PanelFn pick512_w(int R) {  // R in 1..8
  switch (R) {
    case 8: return panels512_fn<S, 8, W>;
    case 7: return panels512_fn<S, 7, W>;
    case 6: return panels512_fn<S, 6, W>;
    case 5: return panels512_fn<S, 5, W>;
    case 4: return panels512_fn<S, 4, W>;
    case 3: return panels512_fn<S, 3, W>;
    case 2: return panels512_fn<S, 2, W>;
    default: return panels512_fn<S, 1, W>;
  }
}

template <typename S>
PanelFn pick512(int R, int W) { return W == 2 ? pick512_w<S, 2>(R) : pick512_w<S, 1>(R); }

}  // namespace

template <typename S>
void pack_b(const S* b, int64_t K, int64_t N, PackedB<S>& out) {
  out.K = K, out.N = N;
  out.p.assign((size_t)(out.panels() * K * P), S{});
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++) out.p[(size_t)(((n / P) * K + k) * P + n % P)] = b[k * N + n];
}

template <typename S>
void gemm_packed_b(const float* a, const PackedB<S>& b, float* y, int64_t M, ThreadPool& pool) {
  const int64_t K = b.K, N = b.N, panels = b.panels();
  const bool avx2 = cpu_has_avx2() && simd_enabled();
  // Groups of 4 panels (64 columns) per thread task.
  const int64_t groups = (panels + 3) / 4;
  if (M > 1 && avx2 && cpu_has_avx512()) {  // several rows: 8 rows x 2 panels a tile (one row, decode, is memory-bound)
    pool.parallel_for_cost(groups, (double)(M * K * 4 * P), [&](int64_t g0, int64_t g1) {
      float out[8 * 2 * P];
      for (int64_t g = g0; g < g1; g++) {
        const int64_t p0 = g * 4, np = std::min<int64_t>(4, panels - p0);
        for (int64_t m0 = 0; m0 < M; m0 += 8) {  // the rows' activations reused from cache by the group's panels
          const int R = (int)std::min<int64_t>(8, M - m0);
          for (int64_t q = 0; q < np; q += 2) {
            const int W = (int)std::min<int64_t>(2, np - q);
            pick512<S>(R, W)(a + m0 * K, K, b.p.data() + (p0 + q) * K * P, out);
            for (int r = 0; r < R; r++)
              for (int64_t c = 0; c < W * P; c++) {
                const int64_t n = (p0 + q) * P + c;
                if (n < N) y[(m0 + r) * N + n] = out[r * W * P + c];
              }
          }
        }
      }
    });
    return;
  }
  pool.parallel_for_cost(groups, (double)(M * K * 4 * P), [&](int64_t g0, int64_t g1) {
    float out[4 * 4 * P];
    for (int64_t g = g0; g < g1; g++) {
      const int64_t p0 = g * 4, np = std::min<int64_t>(4, panels - p0);
      for (int64_t m0 = 0; m0 < M; m0 += 4) {
        const int R = (int)std::min<int64_t>(4, M - m0);
        const int W = R == 1 ? (int)np : 1;  // one row: the 4 panels at once; several rows: one panel at a time
        for (int64_t q = 0; q < np; q += W) {
          const S* pp = b.p.data() + (p0 + q) * K * P;
          if (avx2) pick<S>(R, W)(a + m0 * K, K, pp, out);
          else for (int w = 0; w < W; w++) panel_scalar(R, a + m0 * K, K, pp + w * K * P, out + w * P);
          // out is [R][W * P] (scalar: rows of W * P too, filled panel by panel)
          for (int r = 0; r < R; r++)
            for (int64_t c = 0; c < W * P; c++) {
              const int64_t n = (p0 + q) * P + c;
              if (n < N) y[(m0 + r) * N + n] = out[r * W * P + c];
            }
        }
      }
    }
  });
}

template void pack_b<float>(const float*, int64_t, int64_t, PackedB<float>&);
template void pack_b<f16_t>(const f16_t*, int64_t, int64_t, PackedB<f16_t>&);
template void pack_b<bf16_t>(const bf16_t*, int64_t, int64_t, PackedB<bf16_t>&);
template void gemm_packed_b<float>(const float*, const PackedB<float>&, float*, int64_t, ThreadPool&);
template void gemm_packed_b<f16_t>(const float*, const PackedB<f16_t>&, float*, int64_t, ThreadPool&);
template void gemm_packed_b<bf16_t>(const float*, const PackedB<bf16_t>&, float*, int64_t, ThreadPool&);

}  // namespace ogx::cpu
