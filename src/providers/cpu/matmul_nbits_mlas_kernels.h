// Internals of the MLAS-exact int4 GEMM (matmul_nbits_mlas.h) shared by its AVX-512 VNNI tile kernels
// (matmul_nbits_mlas.cpp) and their AVX2 twins (matmul_nbits_mlas_avx2.cpp): the tile-kernel signature, the lane
// index of the scales, and the fp32 sums of step 3 and corrections of step 4, which both ISAs perform with the same
// operations (so the twins give the same bits). Included by those two files only.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "providers/cpu/matmul_nbits_mlas.h"

namespace ogx::cpu::nbits {

// y for R rows and TT column tiles from tile t (see tile_kernel in matmul_nbits_mlas.cpp): packed weights, the
// rows' activation groups / tail blocks / block sums, the odd last row (or -1), bias (or null), y and its stride.
using TileFn = void (*)(const MlasQ4Packed&, int64_t t, const MlasActGroup* x, const MlasActTail* xt,
                        const float* asum, int r1, const float* bias, float* y, int64_t ldy);

// One ISA's kernels: the tile kernel for a block size, with step 4 inside (corr) or not, R rows (1..4) and
// several tiles a call (wide); and step 4 as a pass over rows [m0, m1) of tiles [t, t + tiles) (scratch: [nb][16]).
struct Q4Kernels {
  TileFn (*pick)(int64_t bs, bool corr, int R, bool wide);
  void (*correct_rows)(const MlasQ4Packed& p, const MlasActs& act, int64_t m0, int64_t m1, int64_t t, int64_t tiles,
                       float* y, float* scratch);
};
const Q4Kernels& q4_kernels_avx512();
const Q4Kernels& q4_kernels_avx2();

// Tiles a call for R rows: as many as keep 16 accumulators.
inline int tiles_per_call(int R) { return R == 1 ? 4 : R == 2 ? 2 : 1; }

constexpr int layout_index(int bs) { return bs == 16 ? 0 : bs == 32 ? 1 : bs == 64 ? 2 : 3; }

// Lane l of column c's scale vector: element lane_block[l] * kTile + c of a group's block-major scales.
struct LaneIndex {
  alignas(64) int32_t v[5][kTile][16];
  LaneIndex() {
    const int64_t sizes[5] = {16, 32, 64, 128, 256};
    for (int i = 0; i < 5; i++)
      for (int c = 0; c < kTile; c++)
        for (int l = 0; l < 16; l++) v[i][c][l] = mlas_layout(sizes[i]).lane_block[l] * kTile + c;
  }
};
extern const LaneIndex kLaneIndex;

#define OGX_Q4_AVX2 __attribute__((target("avx2,fma")))

// 8 packed bytes -> 16 unsigned 4-bit values in K order, as 16-bit integers.
OGX_Q4_AVX2 inline __m256i unpack16_epi16(const uint8_t* p) {
  const __m128i x = _mm_loadl_epi64((const __m128i*)p);
  const __m128i v = _mm_and_si128(_mm_unpacklo_epi64(x, _mm_srli_epi16(x, 4)), _mm_set1_epi8(15));
  return _mm256_cvtepu8_epi16(v);
}

// 8 lanes, a tile of 4 columns, before the last add: s[c] = ((a[c][0] + a[c][1]) + a[c][2]) + a[c][3] and
// s[4 + c] = ((a[c][4] + a[c][5]) + a[c][6]) + a[c][7].
OGX_Q4_AVX2 inline __m256 quarter_sums4(const __m256* a) {
  // transpose each 128-bit half: t[j] holds element j of the four columns
  const __m256 l01 = _mm256_unpacklo_ps(a[0], a[1]), h01 = _mm256_unpackhi_ps(a[0], a[1]);
  const __m256 l23 = _mm256_unpacklo_ps(a[2], a[3]), h23 = _mm256_unpackhi_ps(a[2], a[3]);
  const __m256 t0 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(l01), _mm256_castps_pd(l23)));
  const __m256 t1 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(l01), _mm256_castps_pd(l23)));
  const __m256 t2 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(h01), _mm256_castps_pd(h23)));
  const __m256 t3 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(h01), _mm256_castps_pd(h23)));
  return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(t0, t1), t2), t3);
}

// 8 lanes, a tile of 4 columns: out[c] = ((a[c][0] + a[c][1]) + a[c][2]) + a[c][3] +
// (((a[c][4] + a[c][5]) + a[c][6]) + a[c][7]).
OGX_Q4_AVX2 inline __m128 sum_tile4(const __m256* a) {
  const __m256 s = quarter_sums4(a);
  return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

// 8 lanes, one column: (l0 + l4 + (l2 + l6)) + (l1 + l5 + (l3 + l7)).
OGX_Q4_AVX2 inline float sum_single(__m256 a) {
  __m128 r = _mm_add_ps(_mm256_extractf128_ps(a, 1), _mm256_castps256_ps128(a));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}

// -zp * scale_b for the 4 columns of one block (at: its index in p.s / p.z).
OGX_Q4_AVX2 inline __m128 block_bsum(const MlasQ4Packed& p, int64_t at) {
  const __m128 s4 = _mm_loadu_ps(p.s.data() + at);
  if (p.sym) return _mm_mul_ps(s4, _mm_set1_ps(-8.f));
  int32_t raw;
  __builtin_memcpy(&raw, p.z.data() + at, 4);
  const __m128 zf = _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(raw)));
  return _mm_mul_ps(_mm_sub_ps(_mm_setzero_ps(), zf), s4);
}

}  // namespace ogx::cpu::nbits
