// The AVX2 + FMA twin of the AVX-512 VNNI tile kernels of the MLAS-exact int4 GEMM (matmul_nbits_mlas.cpp), for
// CPUs without AVX-512 VNNI (and, through set_q4_force_avx2, for the tests on CPUs with it). Same packed layout,
// same fp32 operations in the same order, so the results are the same bits: MLAS's 16 fp32 lanes live in two
// 256-bit halves (lanes 0..7, 8..15) with the same per-lane convert / multiply / FMA; the exact integer dots come
// from vpmaddubsw + vpmaddwd instead of vpdpbusd (weights 0..15 times int8 activations: the 16-bit pair sums, at
// most 2 x 15 x 128 per product pair and twice that when two runs add, never saturate); the lane sums are the
// AVX-512 kernel's, taken half by half.
#include <immintrin.h>

#include <algorithm>

#include "providers/cpu/matmul_nbits_mlas_kernels.h"

namespace ogx::cpu::nbits {
namespace {

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// 16 fp32 lanes as two halves.
struct V16 {
  __m256 lo, hi;
};

// Exact int32 dot per lane of 4 unsigned weight bytes (0..15) and 4 int8 activations, two runs added.
OGX_Q4_AVX2 inline __m256i dot_runs(__m256i w0, __m256i a0, __m256i w1, __m256i a1) {
  const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(w0, a0), _mm256_maddubs_epi16(w1, a1));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

// 16 lanes, a tile of 4 columns in the last row of an odd M: (q0 + q2) + (q1 + q3), q_j the quarter sums.
OGX_Q4_AVX2 inline __m128 sum_tile4_16(const V16* a) {
  __m256 lo[4], hi[4];
  for (int c = 0; c < 4; c++) lo[c] = a[c].lo, hi[c] = a[c].hi;
  const __m256 h = _mm256_add_ps(quarter_sums4(lo), quarter_sums4(hi));  // [q0 + q2 | q1 + q3]
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// The AVX2 twin of tile_kernel (matmul_nbits_mlas.cpp): the same steps, lane for lane.
template <int BS, int R, int TT, bool CORR>
OGX_Q4_AVX2 void tile_kernel(const MlasQ4Packed& p, int64_t t, const MlasActGroup* x, const MlasActTail* xt,
                             const float* asum, int r1, const float* bias, float* y, int64_t ldy) {
  constexpr int C = kTile, BPG = BS <= 128 ? 128 / BS : 1;
  const int64_t G = p.groups, nb = p.nb, gpb = p.bs / BS;
  const __m256i m15 = _mm256_set1_epi8(15);
  V16 acc[R][TT * C];
  __m128 corr[R][TT];
  for (int r = 0; r < R; r++)
    for (int u = 0; u < TT; u++) {
      corr[r][u] = _mm_setzero_ps();
      for (int c = 0; c < C; c++) acc[r][u * C + c] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    }
  for (int64_t g = 0; g < G; g++) {
    const int64_t b0 = BS < 128 ? g * BPG : g / gpb;
    for (int u = 0; u < TT; u++) {
      const uint8_t* wg = p.w_at(t + u, g);
      const float* sg = p.s.data() + ((t + u) * nb + b0) * C;
      for (int c = 0; c < C; c++) {
        // byte j: low nibble value j of register 0, high nibble value j of register 1; lanes 0..7 are bytes 0..31
        const __m256i wl = _mm256_loadu_si256((const __m256i*)(wg + c * 64));
        const __m256i wh = _mm256_loadu_si256((const __m256i*)(wg + c * 64 + 32));
        const __m256i w0l = _mm256_and_si256(wl, m15), w1l = _mm256_and_si256(_mm256_srli_epi16(wl, 4), m15);
        const __m256i w0h = _mm256_and_si256(wh, m15), w1h = _mm256_and_si256(_mm256_srli_epi16(wh, 4), m15);
        V16 sb;
        if constexpr (BS < 128) {
          const int32_t* idx = kLaneIndex.v[layout_index(BS)][c];
          sb.lo = _mm256_i32gather_ps(sg, _mm256_load_si256((const __m256i*)idx), 4);
          sb.hi = _mm256_i32gather_ps(sg, _mm256_load_si256((const __m256i*)(idx + 8)), 4);
        } else {
          sb.lo = sb.hi = _mm256_set1_ps(sg[c]);
        }
        for (int r = 0; r < R; r++) {
          const MlasActGroup& xa = x[r * G + g];
          const __m256i dl = dot_runs(w0l, _mm256_load_si256((const __m256i*)xa.q), w1l,
                                      _mm256_load_si256((const __m256i*)(xa.q + 64)));
          const __m256i dh = dot_runs(w0h, _mm256_load_si256((const __m256i*)(xa.q + 32)), w1h,
                                      _mm256_load_si256((const __m256i*)(xa.q + 96)));
          V16& a = acc[r][u * C + c];
          a.lo = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dl), _mm256_mul_ps(sb.lo, _mm256_load_ps(xa.sa16)), a.lo);
          a.hi = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dh), _mm256_mul_ps(sb.hi, _mm256_load_ps(xa.sa16 + 8)), a.hi);
        }
      }
      if (CORR && (BS < 128 || g % gpb == 0)) {
        for (int j = 0; j < BPG; j++) {
          const __m128 bsum = block_bsum(p, ((t + u) * nb + b0 + j) * C);
          for (int r = 0; r < R; r++)
            corr[r][u] = _mm_fmadd_ps(_mm_set1_ps(asum[r * nb + b0 + j]), bsum, corr[r][u]);
        }
      }
    }
  }
  for (int u = 0; u < TT; u++) {
    const int64_t tu = t + u;
    const int cols = (int)std::min<int64_t>(C, p.N - tu * C);
    __m256 acc8[R][C];
    if constexpr (BS <= 32) {
      for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) acc8[r][c] = _mm256_add_ps(acc[r][u * C + c].lo, acc[r][u * C + c].hi);
    }
    for (int64_t j = 0; j < p.tail; j++) {  // block sizes 16, 32, 64
      const int64_t blk = G * BPG + j;
      alignas(16) float sbv[4];
      _mm_store_ps(sbv, _mm_loadu_ps(p.s.data() + (tu * nb + blk) * C));
      const uint8_t* wj = p.wt.data() + (tu * p.tail + j) * C * (BS / 2);
      for (int c = 0; c < C; c++) {
        for (int r = 0; r < R; r++) {
          const MlasActTail& xa = xt[r * p.tail + j];
          const float cs = xa.sa * sbv[c];
          if constexpr (BS == 16) {
            const __m256i d = _mm256_madd_epi16(unpack16_epi16(wj + c * 8),
                                                _mm256_cvtepi8_epi16(_mm_load_si128((const __m128i*)xa.q)));
            acc8[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), _mm256_set1_ps(cs), acc8[r][c]);
          } else if constexpr (BS == 32) {  // values in K order: low nibbles 0..15, high nibbles 16..31
            const __m128i raw = _mm_loadu_si128((const __m128i*)(wj + c * 16));
            const __m256i w = _mm256_and_si256(
                _mm256_inserti128_si256(_mm256_castsi128_si256(raw), _mm_srli_epi16(raw, 4), 1), m15);
            const __m256i d = _mm256_madd_epi16(_mm256_maddubs_epi16(w, _mm256_load_si256((const __m256i*)xa.q)),
                                                _mm256_set1_epi16(1));
            acc8[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), _mm256_set1_ps(cs), acc8[r][c]);
          } else if constexpr (BS == 64) {  // low nibbles values 0..31 (lanes 0..7), high nibbles 32..63
            const __m256i raw = _mm256_loadu_si256((const __m256i*)(wj + c * 32));
            const __m256i one = _mm256_set1_epi16(1);
            const __m256i dl = _mm256_madd_epi16(
                _mm256_maddubs_epi16(_mm256_and_si256(raw, m15), _mm256_load_si256((const __m256i*)xa.q)), one);
            const __m256i dh = _mm256_madd_epi16(
                _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(raw, 4), m15),
                                     _mm256_load_si256((const __m256i*)(xa.q + 32))),
                one);
            V16& a = acc[r][u * C + c];
            a.lo = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dl), _mm256_set1_ps(cs), a.lo);
            a.hi = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dh), _mm256_set1_ps(cs), a.hi);
          }
        }
      }
      if constexpr (CORR) {
        const __m128 bsum = block_bsum(p, (tu * nb + blk) * C);
        for (int r = 0; r < R; r++) corr[r][u] = _mm_fmadd_ps(_mm_set1_ps(asum[r * nb + blk]), bsum, corr[r][u]);
      }
    }
    for (int r = 0; r < R; r++) {
      alignas(16) float out[C], cr[C];
      if constexpr (BS <= 32) {
        if (cols == C) _mm_store_ps(out, sum_tile4(acc8[r]));
        else
          for (int c = 0; c < cols; c++) out[c] = sum_single(acc8[r][c]);
      } else {
        if (cols == C && r == r1) _mm_store_ps(out, sum_tile4_16(&acc[r][u * C]));
        else
          for (int c = 0; c < cols; c++)
            out[c] = sum_single(_mm256_add_ps(acc[r][u * C + c].lo, acc[r][u * C + c].hi));
      }
      _mm_store_ps(cr, corr[r][u]);
      float* yr = y + r * ldy + u * C;
      for (int c = 0; c < cols; c++) {
        float v = out[c];
        if (bias) v += bias[u * C + c];
        yr[c] = CORR ? v + cr[c] : v;
      }
    }
  }
}

template <int BS, bool CORR>
TileFn pick_rows(int R, bool wide) {
  switch (R) {
    case 4: return tile_kernel<BS, 4, 1, CORR>;
    case 3: return tile_kernel<BS, 3, 1, CORR>;
    case 2: return wide ? tile_kernel<BS, 2, 2, CORR> : tile_kernel<BS, 2, 1, CORR>;
    default: return wide ? tile_kernel<BS, 1, 4, CORR> : tile_kernel<BS, 1, 1, CORR>;
  }
}
template <int BS>
TileFn pick_corr(bool corr, int R, bool wide) {
  return corr ? pick_rows<BS, true>(R, wide) : pick_rows<BS, false>(R, wide);
}
TileFn pick(int64_t bs, bool corr, int R, bool wide) {
  switch (bs) {
    case 16: return pick_corr<16>(corr, R, wide);
    case 32: return pick_corr<32>(corr, R, wide);
    case 64: return pick_corr<64>(corr, R, wide);
    default: return pick_corr<128>(corr, R, wide);
  }
}

// The twin of correct_rows: the same FMA chain per column over the blocks, 8 columns a vector.
OGX_Q4_AVX2 void correct_rows(const MlasQ4Packed& p, const MlasActs& act, int64_t m0, int64_t m1, int64_t t,
                              int64_t tiles, float* y, float* bs) {
  const int64_t nb = p.nb;
  const int cols = (int)std::min<int64_t>(tiles * kTile, p.N - t * kTile);
  for (int64_t b = 0; b < nb; b++) {
    std::fill(bs + b * 16, bs + b * 16 + 16, 0.f);
    for (int64_t u = 0; u < tiles; u++) _mm_storeu_ps(bs + b * 16 + u * 4, block_bsum(p, ((t + u) * nb + b) * kTile));
  }
  constexpr int kRows = 4;
  for (int64_t r0 = m0; r0 < m1; r0 += kRows) {
    const int R = (int)std::min<int64_t>(kRows, m1 - r0);
    const float* asum = act.asum.data() + r0 * nb;
    __m256 acc[kRows][2];
#pragma GCC unroll 4
    for (int r = 0; r < kRows; r++) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
      const __m256 v0 = _mm256_loadu_ps(bs + b * 16), v1 = _mm256_loadu_ps(bs + b * 16 + 8);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; r++)
        if (r < R) {
          const __m256 a = _mm256_set1_ps(asum[r * nb + b]);
          acc[r][0] = _mm256_fmadd_ps(a, v0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(a, v1, acc[r][1]);
        }
    }
    for (int r = 0; r < R; r++) {
      alignas(32) float c16[16];
      _mm256_store_ps(c16, acc[r][0]);
      _mm256_store_ps(c16 + 8, acc[r][1]);
      float* yr = y + (r0 + r) * p.N + t * kTile;
      for (int c = 0; c < cols; c++) yr[c] = c16[c] + yr[c];
    }
  }
}

}  // namespace

const Q4Kernels& q4_kernels_avx2() {
  static const Q4Kernels k{pick, correct_rows};
  return k;
}

}  // namespace ogx::cpu::nbits
