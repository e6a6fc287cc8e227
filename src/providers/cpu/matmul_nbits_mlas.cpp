// MLAS-exact int4 x int8 GEMM (see matmul_nbits_mlas.h): the lane layouts of the block sizes, packing at session
// creation, activation packing per run, and the AVX-512 VNNI kernel over tiles of up to 4 rows x kTile columns
// (its AVX2 twin: matmul_nbits_mlas_avx2.cpp).
#include "providers/cpu/matmul_nbits_mlas.h"
#include "providers/cpu/matmul_nbits_mlas_kernels.h"

#include <immintrin.h>

#include <algorithm>
#include <thread>

namespace ogx::cpu::nbits {

namespace {

// Lane l = 4L + j of MLAS's 16 for each block size (from how its kernels interleave two dot registers):
//  16: blocks L (j < 2) or 4 + L, values 4 (j & 1) + {0..3} and + 8 of the block;
//  32: blocks 0 0 2 2 0 0 2 2 1 1 3 3 1 1 3 3, values 16 (L & 1) + 4 (j & 1) + {0..3} and + 8;
//  64: block j & 1, values 16 L + 4 (j >> 1) + {0..3} and + 8;
//  128, 256: values 4l + {0..3} and 64 + 4l + {0..3} of the group.
MlasLayout make_layout(int bs) {
  MlasLayout m;
  m.bs = bs;
  m.blocks_per_group = std::max(1, 128 / bs);
  m.groups_per_block = std::max(1, bs / 128);
  for (int l = 0; l < 16; l++) {
    const int L = l / 4, j = l % 4;
    int block = 0, off = 4 * l, second = 64;
    if (bs == 16) block = j < 2 ? L : 4 + L, off = 4 * (j & 1), second = 8;
    if (bs == 32) block = (j >> 1) * 2 + (L >> 1), off = 16 * (L & 1) + 4 * (j & 1), second = 8;
    if (bs == 64) block = j & 1, off = 16 * L + 4 * (j >> 1), second = 8;
    const int base = bs <= 64 ? block * bs : 0;
    m.lane_block[l] = (uint8_t)block;
    m.run[0][l] = (uint8_t)(base + off);
    m.run[1][l] = (uint8_t)(base + off + second);
  }
  return m;
}

const MlasLayout kLayouts[5] = {make_layout(16), make_layout(32), make_layout(64), make_layout(128),
                                make_layout(256)};

// Value (within the group) of byte i (0..127) of the two registers.
inline int group_value(const MlasLayout& m, int i) { return m.run[i / 64][(i % 64) / 4] + i % 4; }

}  // namespace

bool mlas_block_supported(int64_t bs) { return bs == 16 || bs == 32 || bs == 64 || bs == 128 || bs == 256; }

const MlasLayout& mlas_layout(int64_t bs) {
  return kLayouts[bs == 16 ? 0 : bs == 32 ? 1 : bs == 64 ? 2 : bs == 128 ? 3 : 4];
}

void pack_q4_mlas(const uint8_t* b, const float* scales, const uint8_t* zp, int64_t K, int64_t N, int64_t bs,
                  int threads, MlasQ4Packed& p) {
  const MlasLayout& lay = mlas_layout(bs);
  p.K = K, p.N = N, p.bs = bs;
  p.nb = (K + bs - 1) / bs;
  p.groups = bs <= 128 ? p.nb / lay.blocks_per_group : p.nb * lay.groups_per_block;
  p.tail = bs <= 128 ? p.nb % lay.blocks_per_group : 0;
  p.sym = std::all_of(zp, zp + N * p.nb, [](uint8_t z) { return z == 8; });
  const int64_t T = p.tiles(), G = p.groups, nb = p.nb, half = bs / 2;
  p.w.assign((size_t)(p.quads() * 4 * G * kTile * 64), 0);
  p.wt.assign((size_t)(T * p.tail * kTile * half), 0);
  p.s.assign((size_t)(T * nb * kTile), 0.f);
  p.z.clear();
  if (!p.sym) p.z.assign((size_t)(T * nb * kTile), 8);
  auto pack_tiles = [&](int64_t t0, int64_t t1) {
    for (int64_t n = t0 * kTile; n < std::min(N, t1 * kTile); n++) {
      const int64_t t = n / kTile, c = n % kTile;
      const uint8_t* col = b + n * nb * half;
      auto q = [&](int64_t k) -> uint8_t { return (col[k >> 1] >> ((k & 1) * 4)) & 15; };  // k < nb * bs
      for (int64_t g = 0; g < G; g++) {
        uint8_t* dst = const_cast<uint8_t*>(p.w_at(t, g)) + c * 64;
        for (int j = 0; j < 64; j++)
          dst[j] = (uint8_t)(q(g * 128 + group_value(lay, j)) | (q(g * 128 + group_value(lay, 64 + j)) << 4));
      }
      for (int64_t r = 0; r < p.tail; r++) {
        uint8_t* dst = &p.wt[(size_t)(((t * p.tail + r) * kTile + c) * half)];
        const int64_t k0 = G * 128 + r * bs;
        for (int64_t i = 0; i < half; i++) dst[i] = (uint8_t)(q(k0 + i) | (q(k0 + half + i) << 4));
      }
      for (int64_t blk = 0; blk < nb; blk++) {
        const size_t at = (size_t)((t * nb + blk) * kTile + c);
        p.s[at] = scales[n * nb + blk];
        if (!p.sym) p.z[at] = zp[n * nb + blk];
      }
    }
  };
  const int nt = N * K >= (1 << 22) ? std::max(1, threads) : 1;
  std::vector<std::thread> pool;
  for (int i = 1; i < nt; i++) pool.emplace_back(pack_tiles, T * i / nt, T * (i + 1) / nt);
  pack_tiles(0, T / nt);
  for (auto& th : pool) th.join();
}

void resize_acts(const MlasQ4Packed& p, int64_t M, MlasActs& act) {
  act.groups.resize((size_t)(M * p.groups));
  act.tails.resize((size_t)(M * p.tail));
  act.asum.resize((size_t)(M * p.nb));
}

void pack_acts_mlas(const MlasQ4Packed& p, const int8_t* qa, const float* sa, int64_t m0, int64_t m1,
                    MlasActs& act) {
  const MlasLayout& lay = mlas_layout(p.bs);
  const int64_t bs = p.bs, kp = p.nb * bs;
  uint8_t order[128];
  for (int i = 0; i < 128; i++) order[i] = (uint8_t)group_value(lay, i);
  for (int64_t m = m0; m < m1; m++) {
    const int8_t* row = qa + m * kp;
    const float* srow = sa + m * p.nb;
    for (int64_t blk = 0; blk < p.nb; blk++) {
      int s = 0;
      for (int64_t i = 0; i < bs; i++) s += row[blk * bs + i];
      act.asum[(size_t)(m * p.nb + blk)] = srow[blk] * (float)s;
    }
    for (int64_t g = 0; g < p.groups; g++) {
      MlasActGroup& x = act.groups[(size_t)(m * p.groups + g)];
      const int8_t* src = row + g * 128;
      for (int i = 0; i < 128; i++) x.q[i] = src[order[i]];
      const int64_t b0 = bs <= 128 ? g * lay.blocks_per_group : g / lay.groups_per_block;
      for (int l = 0; l < 16; l++) x.sa16[l] = srow[b0 + lay.lane_block[l]];
    }
    for (int64_t r = 0; r < p.tail; r++) {
      const int64_t blk = p.groups * lay.blocks_per_group + r;
      MlasActTail& x = act.tails[(size_t)(m * p.tail + r)];
      std::copy(row + blk * bs, row + blk * bs + bs, x.q);
      x.sa = srow[blk];
    }
  }
}

const LaneIndex kLaneIndex;

// ---- AVX-512 VNNI kernel ----
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define OGX_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))

namespace {

// 32 packed bytes -> 64 unsigned 4-bit values (low nibbles first).
OGX_VNNI inline __m512i unpack64(const uint8_t* p) {
  const __m256i x = _mm256_loadu_si256((const __m256i*)p);
  const __m512i both = _mm512_inserti64x4(_mm512_zextsi256_si512(x), _mm256_srli_epi16(x, 4), 1);
  return _mm512_and_si512(both, _mm512_set1_epi8(15));
}

// 16 packed bytes -> 32 unsigned 4-bit values in K order.
OGX_VNNI inline __m256i unpack32(const uint8_t* p) {
  const __m128i x = _mm_loadu_si128((const __m128i*)p);
  const __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(x), _mm_srli_epi16(x, 4), 1);
  return _mm256_and_si256(both, _mm256_set1_epi8(15));
}

// 16 lanes, a tile of 4 columns in the last row of an odd M: (q0 + q2) + (q1 + q3), q_j the quarter sums.
OGX_VNNI inline __m128 sum_tile4_16(const __m512* a) {
  const __m512 l01 = _mm512_unpacklo_ps(a[0], a[1]), h01 = _mm512_unpackhi_ps(a[0], a[1]);
  const __m512 l23 = _mm512_unpacklo_ps(a[2], a[3]), h23 = _mm512_unpackhi_ps(a[2], a[3]);
  const __m512 t0 = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(l01), _mm512_castps_pd(l23)));
  const __m512 t1 = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(l01), _mm512_castps_pd(l23)));
  const __m512 t2 = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(h01), _mm512_castps_pd(h23)));
  const __m512 t3 = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(h01), _mm512_castps_pd(h23)));
  const __m512 q = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(t0, t1), t2), t3);  // quarter j: q_j of the columns
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(q), _mm512_extractf32x8_ps(q, 1));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// A zeroed register for a vpdpbusd accumulator, by the zeroing idiom (no execution port) rather than a copy of one
// zero register (GCC's choice for a hoisted constant: a move per dot, and moves of 512-bit registers take a port).
OGX_VNNI inline __m512i fresh_zero() {
  __m512i z;
  asm volatile("vpxord %0, %0, %0" : "=v"(z));
  return z;
}

OGX_VNNI inline __m256 fold16(__m512 a) {
  return _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
}

// Groups ahead whose weights the one-row kernel prefetches in software (0: none, the default: with the quads'
// sequential layout the hardware prefetchers see one stream per thread, as in a plain read; the software prefetch
// cost ~5 % in cache and no difference out of it could be measured on the shared development machine).
#ifndef OGX_Q4_PREFETCH
#define OGX_Q4_PREFETCH 0
#endif
constexpr int kPrefetchGroups = OGX_Q4_PREFETCH;

// y for the R rows x[r * groups ...] / xt[r * tail ...] (block sums asum[r * nb ...]) and the TT column tiles from
// t, all of which exist (the last tile of the matrix may have fewer than kTile columns: those sum column by
// column, as in MLAS). r1: the row that is the last of an odd M (block sizes >= 64 sum it differently), or -1.
// TT tiles a call give the zero-point chains of step 4 (dependent FMAs) independent work to overlap with. BS: the
// block size, 128 standing for 256 too (the same lanes; a block spans p.bs / 128 groups).
template <int BS, int R, int TT, bool CORR, int PF = (R == 1 ? kPrefetchGroups : 0)>
OGX_VNNI void tile_kernel(const MlasQ4Packed& p, int64_t t, const MlasActGroup* x, const MlasActTail* xt,
                          const float* asum, int r1, const float* bias, float* y, int64_t ldy) {
  constexpr int C = kTile, BPG = BS <= 128 ? 128 / BS : 1;
  const int64_t G = p.groups, nb = p.nb, gpb = p.bs / BS;
  const __m512i zero = _mm512_setzero_si512(), m15 = _mm512_set1_epi8(15);
  __m512 acc[R][TT * C];
  __m128 corr[R][TT];  // step 4, per tile
#pragma GCC unroll 16
  for (int r = 0; r < R; r++)
#pragma GCC unroll 16
    for (int u = 0; u < TT; u++) {
      corr[r][u] = _mm_setzero_ps();
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) acc[r][u * C + c] = _mm512_setzero_ps();
    }
  for (int64_t g = 0; g < G; g++) {
    const int64_t b0 = BS < 128 ? g * BPG : g / gpb;  // first block of the group
    __m512i a0[R], a1[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) {
      const MlasActGroup& xa = x[r * G + g];
      a0[r] = _mm512_load_si512((const void*)xa.q);
      a1[r] = _mm512_load_si512((const void*)(xa.q + 64));
    }
#pragma GCC unroll 16
    for (int u = 0; u < TT; u++) {
      const uint8_t* wg = p.w_at(t + u, g);
      const float* sg = p.s.data() + ((t + u) * nb + b0) * C;
      __m512 s0, s1 = _mm512_setzero_ps();
      if constexpr (BS == 16) s0 = _mm512_loadu_ps(sg), s1 = _mm512_loadu_ps(sg + 16);
      if constexpr (BS == 32) s0 = _mm512_loadu_ps(sg);
      if constexpr (BS == 64) s0 = _mm512_zextps256_ps512(_mm256_loadu_ps(sg));
      if (PF > 0) {  // the weight lines PF groups of a quad ahead in the stream (past the quad: the next one's;
                     // past the array: a prefetch that does nothing)
        const uintptr_t ahead = (uintptr_t)wg + (uintptr_t)PF * 4 * C * 64;
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) _mm_prefetch((const char*)(ahead + c * 64), _MM_HINT_T0);
      }
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) {
        const __m512i wb = _mm512_loadu_si512((const void*)(wg + c * 64));
        const __m512i w0 = _mm512_and_si512(wb, m15), w1 = _mm512_and_si512(_mm512_srli_epi16(wb, 4), m15);
        const __m512i idx = _mm512_load_si512((const void*)kLaneIndex.v[layout_index(BS)][c]);
        __m512 sb;
        if constexpr (BS == 16) sb = _mm512_permutex2var_ps(s0, idx, s1);
        else if constexpr (BS == 32 || BS == 64) sb = _mm512_permutexvar_ps(idx, s0);
        else sb = _mm512_set1_ps(sg[c]);
#pragma GCC unroll 16
        for (int r = 0; r < R; r++) {
          const __m512i d = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(fresh_zero(), w0, a0[r]), w1, a1[r]);
          const __m512 sav = _mm512_load_ps(x[r * G + g].sa16);  // a memory operand of the multiply
          acc[r][u * C + c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), _mm512_mul_ps(sb, sav), acc[r][u * C + c]);
        }
      }
      if (CORR && (BS < 128 || g % gpb == 0)) {
#pragma GCC unroll 8
        for (int j = 0; j < BPG; j++) {
          const __m128 bsum = block_bsum(p, ((t + u) * nb + b0 + j) * C);
#pragma GCC unroll 16
          for (int r = 0; r < R; r++)
            corr[r][u] = _mm_fmadd_ps(_mm_set1_ps(asum[r * nb + b0 + j]), bsum, corr[r][u]);
        }
      }
    }
  }
#pragma GCC unroll 16
  for (int u = 0; u < TT; u++) {
    const int64_t tu = t + u;
    const int cols = (int)std::min<int64_t>(C, p.N - tu * C);
    __m256 acc8[R][C];
    if constexpr (BS <= 32) {
#pragma GCC unroll 16
      for (int r = 0; r < R; r++)
#pragma GCC unroll 16
        for (int c = 0; c < C; c++) acc8[r][c] = fold16(acc[r][u * C + c]);
    }
    for (int64_t j = 0; j < p.tail; j++) {  // block sizes 16, 32, 64
      const int64_t blk = G * BPG + j;
      alignas(16) float sbv[4];
      _mm_store_ps(sbv, _mm_loadu_ps(p.s.data() + (tu * nb + blk) * C));
      const uint8_t* wj = p.wt.data() + (tu * p.tail + j) * C * (BS / 2);
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) {
#pragma GCC unroll 16
        for (int r = 0; r < R; r++) {
          const MlasActTail& xa = xt[r * p.tail + j];
          const float cs = xa.sa * sbv[c];
          if constexpr (BS == 16) {
            const __m256i d = _mm256_madd_epi16(unpack16_epi16(wj + c * 8),
                                                _mm256_cvtepi8_epi16(_mm_load_si128((const __m128i*)xa.q)));
            acc8[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), _mm256_set1_ps(cs), acc8[r][c]);
          } else if constexpr (BS == 32) {
            const __m256i d = _mm256_dpbusd_epi32(_mm256_setzero_si256(), unpack32(wj + c * 16),
                                                  _mm256_load_si256((const __m256i*)xa.q));
            acc8[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), _mm256_set1_ps(cs), acc8[r][c]);
          } else if constexpr (BS == 64) {
            const __m512i d = _mm512_dpbusd_epi32(zero, unpack64(wj + c * 32), _mm512_load_si512((const void*)xa.q));
            acc[r][u * C + c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), _mm512_set1_ps(cs), acc[r][u * C + c]);
          }
        }
      }
      if constexpr (CORR) {
        const __m128 bsum = block_bsum(p, (tu * nb + blk) * C);
#pragma GCC unroll 16
        for (int r = 0; r < R; r++) corr[r][u] = _mm_fmadd_ps(_mm_set1_ps(asum[r * nb + blk]), bsum, corr[r][u]);
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) {
      alignas(16) float out[C], cr[C];
      if constexpr (BS <= 32) {
        if (cols == C) _mm_store_ps(out, sum_tile4(acc8[r]));
        else
          for (int c = 0; c < cols; c++) out[c] = sum_single(acc8[r][c]);
      } else {
        if (cols == C && r == r1) _mm_store_ps(out, sum_tile4_16(&acc[r][u * C]));
        else
          for (int c = 0; c < cols; c++) out[c] = sum_single(fold16(acc[r][u * C + c]));
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

// Kernels by rows, with as many tiles per call as keep 16 accumulators: 4 tiles for 1 row, 2 for 2, 1 for 3 or 4.
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

// Step 4 as its own pass, for many rows: y[m][n] = chain + y[m][n] for rows [m0, m1) and the columns of tiles
// [t, t + tiles), tiles <= 4. The chain is an FMA chain over the blocks in order, 16 columns a vector, 8 rows
// at a time; bs: scratch [nb][16] for the columns' -zp * scale_b.
OGX_VNNI void correct_rows(const MlasQ4Packed& p, const MlasActs& act, int64_t m0, int64_t m1, int64_t t,
                           int64_t tiles, float* y, float* bs) {
  const int64_t nb = p.nb;
  const int cols = (int)std::min<int64_t>(tiles * kTile, p.N - t * kTile);
  for (int64_t b = 0; b < nb; b++) {
    _mm512_storeu_ps(bs + b * 16, _mm512_setzero_ps());
    for (int64_t u = 0; u < tiles; u++) _mm_storeu_ps(bs + b * 16 + u * 4, block_bsum(p, ((t + u) * nb + b) * kTile));
  }
  const __mmask16 mask = (__mmask16)((1u << cols) - 1);
  constexpr int kRows = 8;
  for (int64_t r0 = m0; r0 < m1; r0 += kRows) {
    const int R = (int)std::min<int64_t>(kRows, m1 - r0);
    const float* asum = act.asum.data() + r0 * nb;  // (a local pointer and unrolled rows: acc stays in registers)
    __m512 acc[kRows];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; r++) acc[r] = _mm512_setzero_ps();
    if (R == kRows) {
      for (int64_t b = 0; b < nb; b++) {
        const __m512 v = _mm512_loadu_ps(bs + b * 16);
#pragma GCC unroll 8
        for (int r = 0; r < kRows; r++) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(asum[r * nb + b]), v, acc[r]);
      }
    } else {
      for (int64_t b = 0; b < nb; b++) {
        const __m512 v = _mm512_loadu_ps(bs + b * 16);
#pragma GCC unroll 8
        for (int r = 0; r < kRows; r++)
          if (r < R) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(asum[r * nb + b]), v, acc[r]);
      }
    }
    for (int r = 0; r < R; r++) {
      float* yr = y + (r0 + r) * p.N + t * kTile;
      _mm512_mask_storeu_ps(yr, mask, _mm512_add_ps(acc[r], _mm512_maskz_loadu_ps(mask, yr)));
    }
  }
}

}  // namespace

const Q4Kernels& q4_kernels_avx512() {
  static const Q4Kernels k{pick, correct_rows};
  return k;
}

void q4_gemm_mlas(const MlasQ4Packed& p, const MlasActs& act, int64_t M, int64_t t0, int64_t t1, const float* bias,
                  float* y) {
  // Rows in chunks whose activations stay in L2 while the column tiles stream by; every (row, column) still
  // sees the whole K in one pass, as the exact order of step 1 requires.
  const int64_t row_bytes = p.groups * (int64_t)sizeof(MlasActGroup) + p.tail * (int64_t)sizeof(MlasActTail);
  const int64_t chunk = std::max<int64_t>(4, (512 * 1024 / std::max<int64_t>(row_bytes, 1)) / 4 * 4);
  // Step 4 inside the tile kernels for a few rows (decode: no extra pass over the scales), as a pass of 16-column
  // vectors over each chunk for more (1/16 of the FMAs).
  const bool in_kernel = M <= 4;
  std::vector<float> bs(in_kernel ? 0 : (size_t)(p.nb * 16));
  const int64_t odd_row = M % 2 ? M - 1 : -1;  // summed apart by MLAS (block sizes >= 64)
  const Q4Kernels& k = q4_packed_isa() == Q4Isa::avx512_vnni ? q4_kernels_avx512() : q4_kernels_avx2();
  for (int64_t m0 = 0; m0 < M; m0 += chunk) {
    const int64_t m1 = std::min(M, m0 + chunk);
    for (int64_t t = t0; t < t1; t += 4) {  // 4 tiles' weights stay in L1 while the chunk's rows pass
      const int64_t tt = std::min<int64_t>(4, t1 - t);
      for (int64_t r0 = m0; r0 < m1; r0 += 4) {
        const int R = (int)std::min<int64_t>(4, m1 - r0);
        const int per = tiles_per_call(R);
        const int r1 = odd_row >= r0 && odd_row < r0 + R ? (int)(odd_row - r0) : -1;
        for (int64_t u = 0; u < tt;) {
          const bool wide = per > 1 && u + per <= tt;
          const int64_t n = (t + u) * kTile;
          k.pick(p.bs, in_kernel, R, wide)(p, t + u, act.groups.data() + r0 * p.groups, act.tails.data() + r0 * p.tail,
                                           act.asum.data() + r0 * p.nb, r1, bias ? bias + n : nullptr,
                                           y + r0 * p.N + n, p.N);
          u += wide ? per : 1;
        }
      }
      if (!in_kernel) k.correct_rows(p, act, m0, m1, t, tt, y, bs.data());
    }
  }
}

}  // namespace ogx::cpu::nbits
