// Packed int4 x int8 GEMM for MatMulNBits (see matmul_nbits_packed.h for the layout): repacking at session
// creation, and the AVX-512 VNNI microkernel over tiles of 4 rows x kTile columns.
//
// Per chunk of 64 K values and per (row, column): one vpdpbusd gives 16 int32 lanes of 4 products each, started
// from the zero-point correction (-zp * the lane's activation sum, exact in int32), so each lane holds the exact
// integer dot sum(qa * (qb - zp)) over its 4 values; it is converted to fp32 and accumulated with the weight scale
// and the activation scale of its block (one fp32 product each, like the block dot times scale_a * scale_b).
#include "providers/cpu/matmul_nbits_packed.h"

#include <immintrin.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "providers/cpu/simd.h"

namespace ogx::cpu::nbits {

namespace {

bool detect_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vnni");
}

// One column's 64-value chunk j: 32 bytes, low nibbles k0..k0+31, high nibbles k0+32..k0+63.
void pack_chunk(const uint8_t* col, int64_t kp, int64_t j, uint8_t* dst) {
  const int64_t k0 = j * 64;
  if (k0 + 64 <= kp) {  // source bytes 32j..32j+15 hold k0..k0+31, 32j+16..32j+31 hold k0+32..k0+63
    const uint8_t* lo = col + k0 / 2;
    const uint8_t* hi = lo + 16;
    for (int i = 0; i < 16; i++) {
      dst[2 * i] = (uint8_t)((lo[i] & 15) | ((hi[i] & 15) << 4));
      dst[2 * i + 1] = (uint8_t)((lo[i] >> 4) | (hi[i] & 0xF0));
    }
    return;
  }
  auto q = [&](int64_t k) -> int { return k < kp ? (col[k >> 1] >> ((k & 1) * 4)) & 15 : 0; };
  for (int i = 0; i < 32; i++) dst[i] = (uint8_t)(q(k0 + i) | (q(k0 + 32 + i) << 4));
}

}  // namespace

bool q4_packed_available() {
  static const bool v = detect_vnni();
  return v && simd_enabled();
}

void pack_q4(const uint8_t* b, const float* scales, const uint8_t* zp, int64_t K, int64_t N, int64_t bs, int threads,
             PackedQ4& p) {
  p.K = K, p.N = N, p.bs = bs;
  p.nb = (K + bs - 1) / bs;
  const int64_t kp = p.nb * bs;
  p.chunks = (kp + 63) / 64;
  p.spc = bs <= 64 ? (int)(64 / bs) : 1;
  p.groups = bs <= 64 ? p.chunks : p.nb;
  p.sym = std::all_of(zp, zp + N * p.nb, [](uint8_t z) { return z == 8; });
  const int64_t T = p.tiles(), G = p.groups, S = p.spc;
  p.w.assign((size_t)(T * p.chunks * kTile * 32), 0);
  p.s.assign((size_t)(T * G * kTile * S), 0.f);
  p.z.clear();
  if (!p.sym) p.z.assign((size_t)(T * G * kTile * S + 4), 8);  // +4: the kernel reads 4 bytes per group
  auto pack_tiles = [&](int64_t t0, int64_t t1) {
    for (int64_t n = t0 * kTile; n < std::min(N, t1 * kTile); n++) {
      const int64_t t = n / kTile, c = n % kTile;
      const uint8_t* col = b + n * p.nb * (bs / 2);
      for (int64_t j = 0; j < p.chunks; j++)
        pack_chunk(col, kp, j, &p.w[(size_t)(((t * p.chunks + j) * kTile + c) * 32)]);
      for (int64_t blk = 0; blk < p.nb; blk++) {
        const int64_t g = bs <= 64 ? blk / S : blk, e = bs <= 64 ? blk % S : 0;
        const size_t at = (size_t)(((t * G + g) * kTile + c) * S + e);
        p.s[at] = scales[n * p.nb + blk];
        if (!p.sym) p.z[at] = zp[n * p.nb + blk];
      }
    }
  };
  // Large matrices (the 1B model's 800 MB) are packed by several threads; tiles are independent.
  const int nt = N * K >= (1 << 22) ? std::max(1, threads) : 1;
  std::vector<std::thread> pool;
  for (int i = 1; i < nt; i++) pool.emplace_back(pack_tiles, T * i / nt, T * (i + 1) / nt);
  pack_tiles(0, T / nt);
  for (auto& th : pool) th.join();
}

int64_t panel_chunks(const PackedQ4& p, int64_t M) {
  constexpr int64_t kPanel = 32;  // 64 rows x 32 chunks x 192 bytes = 384 KiB
  return M <= 4 ? std::max<int64_t>(p.chunks, 1) : kPanel;
}

void pack_activations(const PackedQ4& p, const int8_t* qa, const float* sa, int64_t M, int64_t m0, int64_t m1,
                      ActChunk* act) {
  const int64_t as = p.a_stride(), ss = p.sa_stride(), cpg = p.chunks_per_group();
  for (int64_t m = m0; m < m1; m++)
    for (int64_t j = 0; j < p.chunks; j++) {
      const int8_t* q = qa + m * as + j * 64;
      ActChunk& x = act[act_index(p, M, m, j)];
      std::copy(q, q + 64, x.q);
      for (int l = 0; l < 16; l++) {
        x.sx[l] = sa[m * ss + (j / cpg) * p.spc + (p.bs <= 64 ? 4 * l / p.bs : 0)];
        x.corr[l] = p.sym ? -8 * (q[4 * l] + q[4 * l + 1] + q[4 * l + 2] + q[4 * l + 3]) : 0;
      }
    }
}

// ---- AVX-512 VNNI microkernel ----
// GCC 12's intrinsics start some vectors from _mm512_undefined_*, which -Wuninitialized reports at -O2.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define OGX_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))

namespace {

// SPC values (scales of one group) spread over 16 lanes: lane l gets s[l * SPC / 16].
template <int SPC>
OGX_VNNI inline __m512 expand_scale(const float* s) {
  if constexpr (SPC == 1) {
    return _mm512_set1_ps(*s);
  } else if constexpr (SPC == 2) {
    const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_permutexvar_ps(idx, _mm512_zextps128_ps512(_mm_castpd_ps(_mm_load_sd((const double*)s))));
  } else {
    const __m512i idx = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    return _mm512_permutexvar_ps(idx, _mm512_zextps128_ps512(_mm_loadu_ps(s)));
  }
}

// Zero points of one group as bytes: every byte of lane l holds z[l * SPC / 16].
template <int SPC>
OGX_VNNI inline __m512i expand_zp(const uint8_t* z) {
  if constexpr (SPC == 1) return _mm512_set1_epi8((char)*z);
  int32_t raw;
  __builtin_memcpy(&raw, z, 4);
  const __m128i d = _mm_mullo_epi32(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(raw)), _mm_set1_epi32(0x01010101));
  const __m512i idx = SPC == 2 ? _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0)
                               : _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
  return _mm512_permutexvar_epi32(idx, _mm512_zextsi128_si512(d));
}

// 32 packed bytes -> 64 unsigned 4-bit values in K order.
OGX_VNNI inline __m512i unpack64(const uint8_t* p) {
  const __m256i x = _mm256_loadu_si256((const __m256i*)p);
  const __m512i both = _mm512_inserti64x4(_mm512_zextsi256_si512(x), _mm256_srli_epi16(x, 4), 1);
  return _mm512_and_si512(both, _mm512_set1_epi8(15));
}

// out[r][c] for rows qa[0..R) (stride as) and the kTile columns of tile t.
template <int R, int SPC, bool SYM>
// x: the chunks [j0, j1) of R rows, rows xs entries apart.
OGX_VNNI void tile_kernel(const PackedQ4& p, int64_t t, int64_t j0, int64_t j1, const ActChunk* x, int64_t xs,
                          float (*out)[kTile]) {
  constexpr int C = kTile;
  const int gshift = __builtin_ctzll((unsigned long long)p.chunks_per_group());  // a power of two
  const uint8_t* wt = p.w.data() + t * p.chunks * C * 32;
  const float* st = p.s.data() + t * p.groups * C * SPC;
  const uint8_t* zt = SYM ? nullptr : p.z.data() + t * p.groups * C * SPC;
  const __m512i zero = _mm512_setzero_si512();
  __m512 acc[R][C];
  #pragma GCC unroll 4
  for (int r = 0; r < R; r++)
    #pragma GCC unroll 4
    for (int c = 0; c < C; c++) acc[r][c] = _mm512_setzero_ps();
  for (int64_t j = j0; j < j1; j++) {
    const int64_t g = j >> gshift;
    __m512i w[C];
    __m512 sb[C];
    __m512i zv[C];
    #pragma GCC unroll 4
    for (int c = 0; c < C; c++) {
      w[c] = unpack64(wt + (j * C + c) * 32);
      sb[c] = expand_scale<SPC>(st + (g * C + c) * SPC);
      if constexpr (!SYM) zv[c] = expand_zp<SPC>(zt + (g * C + c) * SPC);
    }
    #pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      const ActChunk& xc = x[r * xs + (j - j0)];
      const __m512i a = _mm512_load_si512((const void*)xc.q);
      const __m512 sav = _mm512_load_ps(xc.sx);
      if constexpr (SYM) {
        const __m512i cr = _mm512_load_si512((const void*)xc.corr);  // -8 * lane sums
        #pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
          const __m512 d = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(cr, w[c], a));
          acc[r][c] = _mm512_fmadd_ps(_mm512_mul_ps(d, sb[c]), sav, acc[r][c]);
        }
      } else {
        const __m512i na = _mm512_sub_epi8(zero, a);  // |qa| <= 127, so -qa fits
        #pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
          const __m512i di = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(zero, w[c], a), zv[c], na);
          acc[r][c] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(di), sb[c]), sav, acc[r][c]);
        }
      }
    }
  }
  #pragma GCC unroll 4
  for (int r = 0; r < R; r++)
    #pragma GCC unroll 4
    for (int c = 0; c < C; c++) out[r][c] = _mm512_reduce_add_ps(acc[r][c]);
}

using TileFn = void (*)(const PackedQ4&, int64_t, int64_t, int64_t, const ActChunk*, int64_t, float (*)[kTile]);

template <int SPC, bool SYM>
TileFn pick_rows(int R) {
  switch (R) {
    case 4: return tile_kernel<4, SPC, SYM>;
    case 3: return tile_kernel<3, SPC, SYM>;
    case 2: return tile_kernel<2, SPC, SYM>;
    default: return tile_kernel<1, SPC, SYM>;
  }
}

template <bool SYM>
TileFn pick(int spc, int R) {
  switch (spc) {
    case 4: return pick_rows<4, SYM>(R);
    case 2: return pick_rows<2, SYM>(R);
    default: return pick_rows<1, SYM>(R);
  }
}

}  // namespace

void q4_gemm_packed(const PackedQ4& p, const ActChunk* act, int64_t M, int64_t t0, int64_t t1, const float* bias,
                    float* y) {
  const int64_t pc = panel_chunks(p, M);
  const TileFn full = p.sym ? pick<true>(p.spc, 4) : pick<false>(p.spc, 4);
  const TileFn tail = p.sym ? pick<true>(p.spc, (int)(M % 4)) : pick<false>(p.spc, (int)(M % 4));
  for (int64_t j0 = 0; j0 < p.chunks; j0 += pc) {
    const int64_t j1 = std::min(p.chunks, j0 + pc), len = j1 - j0;
    const ActChunk* panel = act + j0 * M;  // this panel's rows, len chunks each (act_index)
    for (int64_t t = t0; t < t1; t++) {
      const int cols = (int)std::min<int64_t>(kTile, p.N - t * kTile);
      for (int64_t r0 = 0; r0 < M; r0 += 4) {
        const int R = (int)std::min<int64_t>(4, M - r0);
        float out[4][kTile];
        (R == 4 ? full : tail)(p, t, j0, j1, panel + r0 * len, len, out);
        for (int r = 0; r < R; r++) {
          float* dst = y + (r0 + r) * p.N + t * kTile;
          for (int c = 0; c < cols; c++)
            dst[c] = j0 == 0 ? out[r][c] + (bias ? bias[t * kTile + c] : 0.f) : dst[c] + out[r][c];
        }
      }
    }
  }
}

}  // namespace ogx::cpu::nbits
