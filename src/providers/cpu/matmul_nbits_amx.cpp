// AMX-INT8 int4 x int8 GEMM of MatMulNBits (see matmul_nbits_amx.h for the math, the exactness and the sorted K
// order).
//
// Tiles (palette 1), for a block size bs and kc = min(bs, 64) K bytes per tile product ("chunk"):
//   tmm0, tmm1  weights of one panel (16 columns): 16 rows (columns n) x kc bytes (signed w - zp, -15..15)
//   tmm2, tmm3  activations of one row tile (16 rows): kc / 4 rows (K dwords) x 64 bytes (16 rows m x 4 bytes)
//   tmm4..7     C = W x A^T, int32: 16 rows (n) x 16 columns (m)
// Block b's products go to C tile tmm4 + b % 4 (operands tmm0 / tmm2 for even b, tmm1 / tmm3 for odd b): zeroed,
// one TDPBSSD per chunk of the block (bs / kc of them), stored to an L1 scratch two steps later; then for each C
// row (a column n, 16 rows m) acc[n] += float(C) * (sa[m] * sb[n]) in AVX-512, the 16 fp32 accumulators in
// registers. Four blocks are in flight (products of b + 3, store of b + 2, fp32 of b), so the TMUL unit, the tile
// stores and the AVX-512 ports overlap. After the last block the accumulators go to y transposed (+ bias).
// Measured alternatives (bench/cpu.md): 2 panels x 2 row tiles (all 8 tiles, accumulators in L1, one block in
// flight) was 5-10 % slower at 512 rows.
//
// Loop order per thread (a range of quads = panels of 16 columns): rows in chunks whose activations fit in L2
// (kAChunkBytes); per chunk, per panel: its weights are unpacked from the MLAS layout into a scratch
// [kp / kc][16][kc] (kp * 16 bytes: 32 KiB at K = 2048, L1) with its scales [nb][16], the next
// quad's packed bytes are prefetched into L2 during the block loops, and every row tile of the chunk runs the block
// loop over the whole K. A panel is unpacked once per row chunk (one chunk for the 2048-wide projections up to 512
// rows, 8 row tiles per chunk at K = 8192).
#include "providers/cpu/matmul_nbits_amx.h"

#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "common/thread_pool.h"
#include "providers/cpu/simd.h"

namespace ogx::cpu::nbits {

void quantize_row_int8(const float* a, int64_t K, int64_t bs, int64_t nb, int8_t* q, float* scale);

namespace {

std::atomic<bool> g_amx_disabled{false};

bool detect_amx() {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const bool tile = (d >> 24) & 1, int8 = (d >> 25) & 1;
  __builtin_cpu_init();
  if (!tile || !int8 || !__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512dq") ||
      !__builtin_cpu_supports("avx512vbmi"))
    return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

// Sorted K order of a group of 128 values for one block size (matmul_nbits_amx.h): sorted dword s of the group is
// dword src[s] of the unpacked pair [low nibbles: lanes 0..15 | high nibbles: lanes 16..31] and holds the values
// 4 nat[s] .. 4 nat[s] + 3 of the group (K order).
struct SortedOrder {
  alignas(64) int32_t src[32];
  int32_t nat[32];
  alignas(64) uint8_t zidx[128];  // sorted byte i -> its block within the group (0 for block sizes >= 128)
  explicit SortedOrder(int64_t bs) {
    const MlasLayout& lay = mlas_layout(bs);
    int s = 0;
    for (int j = 0; j < lay.blocks_per_group; j++)
      for (int dw = 0; dw < 32; dw++)
        if (lay.lane_block[dw % 16] == j) src[s] = dw, nat[s] = lay.run[dw / 16][dw % 16] / 4, s++;
    for (int i = 0; i < 128; i++) zidx[i] = (uint8_t)(bs >= 128 ? 0 : i / bs);
  }
};
const SortedOrder& sorted_order(int64_t bs) {
  // (built on first use: mlas_layout's tables are another file's statics)
  static const SortedOrder orders[5] = {SortedOrder(16), SortedOrder(32), SortedOrder(64), SortedOrder(128),
                                        SortedOrder(256)};
  return orders[bs == 16 ? 0 : bs == 32 ? 1 : bs == 64 ? 2 : bs == 128 ? 3 : 4];
}

// Rows per chunk: activations of about this many bytes stay in L2 while the column panels pass.
constexpr int64_t kAChunkBytes = 1024 * 1024;

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define OGX_AMX __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma")))
// The tile intrinsics are asm statements that do not say which memory they read or write.
#define OGX_MEMORY_BARRIER() asm volatile("" ::: "memory")

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Weight scratch of one thread: one panel (16 columns) unpacked.
struct WeightPanel {
  std::vector<int8_t> w;  // [kp / kc][16][kc]: chunk c, row n: the kc sorted-order bytes w - zp of column n
  std::vector<float> s;   // [nb][16]: scale_b of column n in block b (0 past N)
};

// Sorted bytes [pos, pos + 64) of column n (v) into a panel's chunks (dst: [kp / kc][16][kc]).
OGX_AMX inline void store_pieces(int8_t* dst, int64_t pos, int n, int64_t kc, __m512i v) {
  int8_t* d = dst + (pos / kc * 16 + n) * kc;  // the first piece; the next ones 16 * kc bytes apart
  if (kc == 64) {
    _mm512_storeu_si512((void*)d, v);
  } else if (kc == 32) {
    _mm256_storeu_si256((__m256i*)d, _mm512_castsi512_si256(v));
    _mm256_storeu_si256((__m256i*)(d + 16 * 32), _mm512_extracti64x4_epi64(v, 1));
  } else {
    _mm_storeu_si128((__m128i*)d, _mm512_castsi512_si128(v));
    _mm_storeu_si128((__m128i*)(d + 16 * 16), _mm512_extracti32x4_epi32(v, 1));
    _mm_storeu_si128((__m128i*)(d + 32 * 16), _mm512_extracti32x4_epi32(v, 2));
    _mm_storeu_si128((__m128i*)(d + 48 * 16), _mm512_extracti32x4_epi32(v, 3));
  }
}

// Unpacks quad q (columns 16 q .. 16 q + 15) into wp.
OGX_AMX void unpack_panel(const MlasQ4Packed& p, int64_t q, WeightPanel& wp) {
  const int64_t bs = p.bs, nb = p.nb, G = p.groups, T = p.tiles(), kc = std::min<int64_t>(bs, 64);
  const SortedOrder& o = sorted_order(bs);
  const int bpg = std::max<int>(1, (int)(128 / bs)), gpb = (int)std::max<int64_t>(1, bs / 128);
  int8_t* dst = wp.w.data();  // [kp / kc][16][kc]
  float* sd = wp.s.data();     // [nb][16]
  const __m512i m15 = _mm512_set1_epi8(15), i0 = _mm512_load_si512(o.src), i1 = _mm512_load_si512(o.src + 16);
  const __m512i z0i = _mm512_load_si512(o.zidx), z1i = _mm512_load_si512(o.zidx + 64);
  // One kc-byte piece of sorted bytes [pos, pos + kc) of column n.
  alignas(64) int8_t buf[64];  // one tail block's bytes
  // Column n's tile, its column within the tile, and whether it exists (the last quad's padding tiles do not).
  auto tile_of = [&](int n) { return q * 4 + n / 4; };
  auto zp_of = [&](int n, int64_t b) -> uint8_t {
    const int64_t t = tile_of(n);
    return p.sym || t >= T ? 8 : p.z[(size_t)((t * nb + b) * kTile + n % 4)];
  };
  // Groups outer, columns inner: the quad's packed bytes are read in address order (one stream for the hardware
  // prefetcher: in a prompt they come from memory).
  const uint8_t* wq = p.w.data() + q * G * 4 * kTile * 64;  // [G][16][64]
  for (int64_t g = 0; g < G; g++) {
    const int64_t b0 = bs <= 128 ? g * bpg : g / gpb;
    for (int n = 0; n < 16; n++) {
      const __m512i v = _mm512_loadu_si512((const void*)(wq + (g * 16 + n) * 64));
      const __m512i lo = _mm512_and_si512(v, m15), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m15);
      __m512i s0 = _mm512_permutex2var_epi32(lo, i0, hi), s1 = _mm512_permutex2var_epi32(lo, i1, hi);
      uint64_t zb = 0x0808080808080808ull;
      if (!p.sym) {
        zb = 0;
        for (int j = 0; j < bpg; j++) zb |= (uint64_t)zp_of(n, b0 + j) << (8 * j);
      }
      const __m512i zv = _mm512_set1_epi64((long long)zb);
      s0 = _mm512_sub_epi8(s0, _mm512_permutexvar_epi8(z0i, zv));
      s1 = _mm512_sub_epi8(s1, _mm512_permutexvar_epi8(z1i, zv));
      store_pieces(dst, g * 128, n, kc, s0);
      store_pieces(dst, g * 128 + 64, n, kc, s1);
    }
  }
  for (int64_t r = 0; r < p.tail; r++) {  // blocks after the last group (bs <= 64): natural K order
    const int64_t blk = G * bpg + r, half = bs / 2;
    for (int n = 0; n < 16; n++) {
      const int64_t t = tile_of(n);
      const uint8_t* src = t < T ? p.wt.data() + ((t * p.tail + r) * kTile + n % 4) * half : nullptr;
      const int z = zp_of(n, blk);
      for (int64_t i = 0; i < half; i++) {
        const int byte = src ? src[i] : 0;
        buf[i] = (int8_t)((byte & 15) - z);
        buf[half + i] = (int8_t)((byte >> 4) - z);
      }
      std::memcpy(dst + (blk * bs / kc * 16 + n) * kc, buf, bs);  // kc == bs here
    }
  }
  for (int64_t b = 0; b < nb; b++)
    for (int n = 0; n < 16; n++) {
      const int64_t t = tile_of(n);
      sd[b * 16 + n] = t < T ? p.s[(size_t)((t * nb + b) * kTile + n % 4)] : 0.f;
    }
}

// The C tile of block b: tmm4 + b % 4, its operands in tmm0 / tmm2 (even b) or tmm1 / tmm3 (odd b). (A macro: the
// tile intrinsics take the register number as a literal.)
#define OGX_BLOCK_PRODUCTS(C, W, A)                    \
  do {                                                 \
    _tile_zero(C);                                     \
    for (int ch = 0; ch < cpb; ch++, off += chunk) {   \
      _tile_loadd(W, w + off, kc);                     \
      _tile_loadd(A, a + off, 64);                     \
      _tile_dpbssd(C, W, A);                           \
    }                                                  \
  } while (0)

// One panel x one row tile, the fp32 accumulators in registers: acc[n] (16 rows m) for the panel's 16 columns,
// written to out [16 n][16 m] at the end. Pipelined over 4 C tiles: at step b the products of block b + 3 are
// issued, block b + 2's C tile is stored (cbuf[(b + 2) % 4]) and block b's (stored two steps before) is added in
// fp32, so neither the TMUL latency nor the tile store's latency stalls the fp32 work.
// w: the panel [kp / kc][16][kc] (WeightPanel::w); a: the row tile [kp / 4][16][4] (AmxActs::a); sb: [nb][16] the
// panel's scales; sa: [nb][16] the row tile's; cbuf: [4][16 n][16 m] int32 scratch; pf_lines lines of pf (up to
// pf_end) are prefetched into L2 per block.
OGX_AMX void block_loop(const int8_t* w, const int8_t* a, const float* sb, const float* sa, int64_t nb, int kc,
                        int cpb, float* out, int32_t* cbuf, const uint8_t* pf, const uint8_t* pf_end,
                        int64_t pf_lines) {
  const int64_t chunk = 16 * kc;
  __m512 acc[16];
#pragma GCC unroll 16
  for (int n = 0; n < 16; n++) acc[n] = _mm512_setzero_ps();
  auto products = [&](int64_t b) OGX_AMX {  // a lambda does not take the function's target by itself
    int64_t off = b * cpb * chunk;
    switch (b & 3) {
      case 0: OGX_BLOCK_PRODUCTS(4, 0, 2); break;
      case 1: OGX_BLOCK_PRODUCTS(5, 1, 3); break;
      case 2: OGX_BLOCK_PRODUCTS(6, 0, 2); break;
      default: OGX_BLOCK_PRODUCTS(7, 1, 3); break;
    }
  };
  auto store = [&](int64_t b) OGX_AMX {
    int32_t* c = cbuf + (b & 3) * 256;
    switch (b & 3) {
      case 0: _tile_stored(4, c, 64); break;
      case 1: _tile_stored(5, c, 64); break;
      case 2: _tile_stored(6, c, 64); break;
      default: _tile_stored(7, c, 64); break;
    }
    OGX_MEMORY_BARRIER();
  };
  // acc += block b's C (in cbuf[b % 4]) x sa x sb; prefetches the next pf_lines lines of pf. (A macro: GCC's
  // lambdas do not take the function's target.)
#define OGX_UPDATE(bb)                                                                                          \
  do {                                                                                                          \
    const int64_t ub = (bb);                                                                                    \
    for (int64_t j = 0; j < pf_lines && pf < pf_end; j++, pf += 64) _mm_prefetch((const char*)pf, _MM_HINT_T1); \
    const int32_t* cr = cbuf + (ub & 3) * 256;                                                                  \
    const __m512 sav = _mm512_loadu_ps(sa + ub * 16);                                                           \
    const float* sbn = sb + ub * 16;                                                                            \
    _Pragma("GCC unroll 16") for (int n = 0; n < 16; n++) {                                                     \
      const __m512 d = _mm512_cvtepi32_ps(_mm512_load_si512((const void*)(cr + n * 16)));                      \
      acc[n] = _mm512_fmadd_ps(d, _mm512_mul_ps(sav, _mm512_set1_ps(sbn[n])), acc[n]);                         \
    }                                                                                                           \
  } while (0)
  for (int64_t b = 0; b < std::min<int64_t>(3, nb); b++) products(b);
  for (int64_t b = 0; b < std::min<int64_t>(2, nb); b++) store(b);
  int64_t b = 0;
  // Steady state 4 blocks a pass (b % 4 == 0): every tile number known at compile time.
#define OGX_STEP(k, C3, W3, A3, C2)                                            \
  do {                                                                         \
    int64_t off = (b + k + 3) * cpb * chunk;                                   \
    OGX_BLOCK_PRODUCTS(C3, W3, A3);                                            \
    _tile_stored(C2, cbuf + ((k + 2) & 3) * 256, 64);                          \
    OGX_MEMORY_BARRIER();                                                      \
    OGX_UPDATE(b + k);                                                         \
  } while (0)
  for (; b + 7 < nb; b += 4) {
    OGX_STEP(0, 7, 1, 3, 6);
    OGX_STEP(1, 4, 0, 2, 7);
    OGX_STEP(2, 5, 1, 3, 4);
    OGX_STEP(3, 6, 0, 2, 5);
  }
#undef OGX_STEP
  for (; b < nb; b++) {
    if (b + 3 < nb) products(b + 3);
    if (b + 2 < nb) store(b + 2);
    OGX_UPDATE(b);
  }
#undef OGX_UPDATE
#pragma GCC unroll 16
  for (int n = 0; n < 16; n++) _mm512_store_ps(out + n * 16, acc[n]);
}

}  // namespace

bool amx_int8_available() {
  static const bool ok = detect_amx();
  return ok && simd_enabled() && !g_amx_disabled.load(std::memory_order_relaxed);
}

bool set_amx_disabled(bool on) { return g_amx_disabled.exchange(on); }

void resize_acts_amx(const MlasQ4Packed& p, int64_t M, AmxActs& act) {
  act.M = M, act.tiles = (M + 15) / 16, act.kp = p.nb * p.bs, act.nb = p.nb;
  act.a.resize((size_t)(act.tiles * act.kp * 16));
  act.sa.resize((size_t)(act.tiles * act.nb * 16));
}

void pack_acts_amx(const MlasQ4Packed& p, const int8_t* qa, const float* sa, int64_t t0, int64_t t1, AmxActs& act) {
  const SortedOrder& o = sorted_order(p.bs);
  const int64_t kp = act.kp, nb = act.nb, G = p.groups;
  for (int64_t t = t0; t < t1; t++) {
    int8_t* dst = act.a.data() + t * kp * 16;  // [kp / 4][16][4]
    for (int i = 0; i < 16; i++) {
      const int64_t m = t * 16 + i;
      float* sd = act.sa.data() + t * nb * 16 + i;
      if (m >= act.M) {
        for (int64_t d = 0; d < kp / 4; d++) std::memset(dst + (d * 16 + i) * 4, 0, 4);
        for (int64_t b = 0; b < nb; b++) sd[b * 16] = 0.f;
        continue;
      }
      const int8_t* row = qa + m * kp;
      for (int64_t g = 0; g < G; g++)
        for (int s = 0; s < 32; s++) std::memcpy(dst + ((g * 32 + s) * 16 + i) * 4, row + g * 128 + o.nat[s] * 4, 4);
      for (int64_t d = G * 32; d < kp / 4; d++) std::memcpy(dst + (d * 16 + i) * 4, row + d * 4, 4);
      for (int64_t b = 0; b < nb; b++) sd[b * 16] = sa[m * nb + b];
    }
  }
}

OGX_AMX void q4_gemm_amx(const MlasQ4Packed& p, const AmxActs& act, int64_t q0, int64_t q1, const float* bias,
                         float* y) {
  const int64_t nb = p.nb, kp = act.kp, N = p.N, M = act.M;
  const int kc = (int)std::min<int64_t>(p.bs, 64), cpb = (int)std::max<int64_t>(1, p.bs / 64);
  thread_local WeightPanel wp;
  wp.w.resize((size_t)(kp * 16));
  wp.s.resize((size_t)(nb * 16));
  alignas(64) float acc[256];        // [16 n][16 m]: one panel x row tile
  alignas(64) int32_t cbuf[4 * 256];  // [4][16 n][16 m]: the C tiles of 4 blocks in flight
  TileConfig cfg;
  for (int i = 0; i < 2; i++) cfg.rows[i] = 16, cfg.colsb[i] = (uint16_t)kc;
  for (int i = 2; i < 4; i++) cfg.rows[i] = (uint8_t)(kc / 4), cfg.colsb[i] = 64;
  for (int i = 4; i < 8; i++) cfg.rows[i] = 16, cfg.colsb[i] = 64;
  _tile_loadconfig(&cfg);
  const __m512i tr = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                        _mm512_set1_epi32(16));  // acc[n][m] for n = 0..15: offsets 16 n
  const int64_t chunk_tiles = std::max<int64_t>(1, kAChunkBytes / (kp * 16));
  const int64_t quad_bytes = p.groups * 4 * kTile * 64;  // a quad's packed groups, contiguous in p.w
  for (int64_t t0 = 0; t0 < act.tiles; t0 += chunk_tiles) {
    const int64_t t1 = std::min(act.tiles, t0 + chunk_tiles);
    for (int64_t q = q0; q < q1; q++) {
      unpack_panel(p, q, wp);
      OGX_MEMORY_BARRIER();
      // The next quad's packed weights, prefetched into L2 spread over this quad's block loops.
      const uint8_t* pf = p.w.data() + std::min(q + 1, q1) * quad_bytes;
      const uint8_t* pf_end = p.w.data() + std::min(q + 2, q1) * quad_bytes;
      const int64_t pf_lines = ((pf_end - pf) / 64 + (t1 - t0) * nb - 1) / ((t1 - t0) * nb);
      const int64_t n0 = q * 16;
      const int nn = (int)std::min<int64_t>(16, N - n0);
      const __mmask16 nmask = (__mmask16)((1u << nn) - 1);
      const __m512 bv = bias ? _mm512_maskz_loadu_ps(nmask, bias + n0) : _mm512_setzero_ps();
      for (int64_t t = t0; t < t1; t++) {
        const uint8_t* cpf = pf + std::min<int64_t>(pf_end - pf, (t - t0) * pf_lines * nb * 64);
        block_loop(wp.w.data(), act.a.data() + t * kp * 16, wp.s.data(), act.sa.data() + t * nb * 16, nb, kc, cpb,
                   acc, cbuf, cpf, pf_end, pf_lines);
        const int mm = (int)std::min<int64_t>(16, M - t * 16);
        for (int m = 0; m < mm; m++)  // y's row t * 16 + m: acc's column m, transposed by a gather
          _mm512_mask_storeu_ps(y + (t * 16 + m) * N + n0, nmask,
                                _mm512_add_ps(_mm512_i32gather_ps(tr, acc + m, 4), bv));
      }
    }
  }
  _tile_release();
}

void run_q4_amx(const MlasQ4Packed& p, const float* af, int64_t K, int64_t M, const float* bias, float* y,
                ThreadPool& pool) {
  const int64_t kp = p.nb * p.bs, nb = p.nb;
  // Scratch shared by every call on this thread (nodes run one at a time; the pool's threads use the caller's).
  thread_local std::vector<int8_t> tl_qa;  // [M][kp] quantized rows
  thread_local std::vector<float> tl_sa;   // [M][nb] their block scales
  thread_local AmxActs tl_act;
  std::vector<int8_t>& qa = tl_qa;
  std::vector<float>& sa = tl_sa;
  AmxActs& act = tl_act;
  qa.resize((size_t)(M * kp));
  sa.resize((size_t)(M * nb));
  resize_acts_amx(p, M, act);
  pool.parallel_for(act.tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t m = t0 * 16; m < std::min(M, t1 * 16); m++)
      quantize_row_int8(af + m * kp, K, p.bs, nb, &qa[(size_t)(m * kp)], &sa[(size_t)(m * nb)]);
    pack_acts_amx(p, qa.data(), sa.data(), t0, t1, act);
  });
  // Threads take contiguous ranges of quads (16 columns each; every row of them): one weight stream per thread.
  pool.parallel_for(p.quads(), 1, [&](int64_t q0, int64_t q1) { q4_gemm_amx(p, act, q0, q1, bias, y); });
}

}  // namespace ogx::cpu::nbits
