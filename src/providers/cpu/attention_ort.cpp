// See attention_ort.h. The helpers are compiled for CPUs with FMA (fused operations as instructions) and without
// (libm's correctly rounded fmaf, same bits); -ffp-contract=off keeps every other * and + rounding on its own.
#include "providers/cpu/attention_ort.h"

#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace ogx::cpu {
namespace {

#define OGX_INLINE inline __attribute__((always_inline))

constexpr float kLowest = std::numeric_limits<float>::lowest();

// MLAS's exp of a max-shifted score (MlasExpConstants, core/mlas/lib/compute.cpp; AVX-512 kernel order).
OGX_INLINE float mlas_exp(float x) {
  x = std::max(-103.9720840454f, x);
  const float bias = 12582912.0f;
  const float m = std::fma(x, 1.44269504088896341f, bias) - bias;
  float r = std::fma(m, -6.93145752e-1f, x);
  r = std::fma(m, -1.42860677e-6f, r);
  float p = 0x1.694000p-10f;
  p = std::fma(p, r, 0x1.125edcp-7f);
  p = std::fma(p, r, 0x1.555b5ap-5f);
  p = std::fma(p, r, 0x1.555450p-3f);
  p = std::fma(p, r, 0x1.fffff6p-2f);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  // vscalefps: p * 2^m with one rounding. m <= 0 here (the score is max-shifted), >= -150 (the clamp); below the
  // normal range the exact p * 2^(m+64) is rounded once by the multiplication with 2^-64.
  const int mi = (int)m;
  auto pow2 = [](int e) {  // 2^e for -126 <= e <= 127
    const uint32_t bits = (uint32_t)(e + 127) << 23;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  return mi >= -126 ? p * pow2(mi) : (p * pow2(mi + 64)) * pow2(-64);
}

// x[i] <- exp(x[i] - max) for i in [i0, i1) of a block row whose other entries are masked; returns the sum in MLAS's
// 16 lanes (lane = i mod 16 within the block), reduced as its AVX-512 kernel does. A masked entry's exp is exactly 0
// (MLAS's exp of the clamped lowest float rounds to 0), so it adds nothing to its lane.
OGX_INLINE float sum_exp(float* __restrict x, int64_t i0, int64_t i1, float max) {
  const float neg = -max;
  float lane[16] = {};
  for (int64_t i = i0; i < i1; i++) {
    x[i] = mlas_exp(x[i] + neg);
    lane[i % 16] += x[i];
  }
  float a[8];
  for (int j = 0; j < 8; j++) a[j] = lane[j] + lane[j + 8];
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// MLAS SGEMM's depth blocking (sgemm.cpp MlasSgemmOperation) for an output N wide over depth K.
OGX_INLINE int64_t sgemm_stride_k(int64_t N, int64_t K) {
  int64_t sn = 128, sk = 128;
  if (N >= K) {
    while (sk / 2 >= K) sn *= 2, sk /= 2;
  } else {
    while (sn > 16 && sn / 2 >= N) sk *= 2, sn /= 2;
  }
  return sk;
}

// Keys [cols, H] -> kt [H, cols], so a row's scores run across keys in the inner loop.
OGX_INLINE void transpose_keys(const float* __restrict k, int64_t cols, int64_t H, float* __restrict kt) {
  for (int64_t d = 0; d < H; d++)
    for (int64_t j = 0; j < cols; j++) kt[d * cols + j] = k[j * H + d];
}

// The register-blocked part of both products for CPUs with AVX2 + FMA (the prompt's time; `fast` below):
// acc[c] = sum over i in [i0, i1) of s[i] * m[i * stride + c], for columns c in 32-wide groups from c0 (below c1);
// returns the first column not done. Each output element is the same fused chain in the same order as in the plain
// loops (from 0, one fma per step): only the loop order changes, so the bits do not. qk: s = the query, m = the
// transposed keys (columns = keys, i = head dimensions); pv: s = a row's weights, m = the values (columns = head
// dimensions, i = keys).
__attribute__((target("avx2,fma"))) inline int64_t fma_column_groups(const float* __restrict s,
                                                                      const float* __restrict m, int64_t stride,
                                                                      int64_t i0, int64_t i1, int64_t c0, int64_t c1,
                                                                      float* __restrict acc) {
  int64_t c = c0;
  for (; c + 32 <= c1; c += 32) {
    __m256 r0 = _mm256_setzero_ps(), r1 = r0, r2 = r0, r3 = r0;
    for (int64_t i = i0; i < i1; i++) {
      const __m256 si = _mm256_set1_ps(s[i]);
      const float* mi = m + i * stride + c;
      r0 = _mm256_fmadd_ps(si, _mm256_loadu_ps(mi), r0);
      r1 = _mm256_fmadd_ps(si, _mm256_loadu_ps(mi + 8), r1);
      r2 = _mm256_fmadd_ps(si, _mm256_loadu_ps(mi + 16), r2);
      r3 = _mm256_fmadd_ps(si, _mm256_loadu_ps(mi + 24), r3);
    }
    _mm256_storeu_ps(acc + c, r0);
    _mm256_storeu_ps(acc + c + 8, r1);
    _mm256_storeu_ps(acc + c + 16, r2);
    _mm256_storeu_ps(acc + c + 24, r3);
  }
  return c;
}

// The maximum of x[j0 .. *jm) (*jm: the end of the last whole 8-lane group), kLowest for none; the same value as
// the sequential std::max loop (a maximum does not depend on the order; a NaN score is skipped either way: vmaxps
// returns its second operand, the running maximum, when the first is NaN), except perhaps the sign of a zero
// maximum, which the exp of score - max and of old max - new max do not see.
__attribute__((target("avx2,fma"))) inline float row_max(const float* __restrict x, int64_t j0, int64_t j1,
                                                          int64_t* jm) {
  __m256 m = _mm256_set1_ps(kLowest);
  int64_t j = j0;
  for (; j + 8 <= j1; j += 8) m = _mm256_max_ps(_mm256_loadu_ps(x + j), m);
  *jm = j;
  alignas(32) float l[8];
  _mm256_store_ps(l, m);
  float r = l[0];
  for (int i = 1; i < 8; i++) r = std::max(r, l[i]);
  return r;
}

// s[j] = scale * q . k[j] for the visible keys j in [j0, j1), MLAS SGEMM order: fused chains over the head in depth
// blocks (of the full block's width `cols`), the first block times the scale, later ones fused onto it.
template <bool fast>
OGX_INLINE void qk_row(const float* __restrict q, const float* __restrict kt, int64_t cols, int64_t j0, int64_t j1,
                       int64_t H, float scale, float* __restrict acc, float* __restrict s) {
  const int64_t sk = sgemm_stride_k(cols, H);
  for (int64_t d0 = 0; d0 < H; d0 += sk) {
    const int64_t d1 = std::min(H, d0 + sk);
    const int64_t jr = fast ? fma_column_groups(q, kt, cols, d0, d1, j0, j1, acc) : j0;  // keys [j0, jr) done
    for (int64_t j = jr; j < j1; j++) acc[j] = 0.0f;
    for (int64_t d = d0; d < d1 && jr < j1; d++) {
      const float qd = q[d];
      const float* __restrict kd = kt + d * cols;
      for (int64_t j = jr; j < j1; j++) acc[j] = std::fma(qd, kd[j], acc[j]);
    }
    if (d0 == 0)
      for (int64_t j = j0; j < j1; j++) s[j] = acc[j] * scale;
    else
      for (int64_t j = j0; j < j1; j++) s[j] = std::fma(acc[j], scale, s[j]);
  }
}

// out[r] (+)= p[r] . v over the block's `depth` keys, MLAS SGEMM order (alpha 1); accumulate: onto out. Row r's
// nonzero weights lie in [vis[2r], vis[2r+1]); the zeros add nothing to a fused chain and are skipped, except in
// MLAS's M = 1 kernel (one-row blocks), whose grouping of keys is positional.
template <bool fast>
OGX_INLINE void pv_block(const float* __restrict p, int64_t rows, const int64_t* vis, const float* __restrict v,
                         int64_t depth, int64_t H, bool accumulate, float* __restrict acc, float* __restrict out) {
  if (rows == 1) {  // MLAS's M = 1 kernel: keys in groups of 4 (then 2, 1), each group's rounded products summed
    int64_t t = 0;  // in order, then the previous output added
    bool zero = !accumulate;
    auto group = [&](int64_t g) {
      for (int64_t h = 0; h < H; h++) {
        float x = p[t] * v[t * H + h];
        for (int64_t i = 1; i < g; i++) x = x + p[t + i] * v[(t + i) * H + h];
        out[h] = x + (zero ? 0.0f : out[h]);
      }
      zero = false;
      t += g;
    };
    while (t + 4 <= depth) group(4);
    if (depth - t >= 2) group(2);
    if (depth - t >= 1) group(1);
    return;
  }
  const int64_t sk = sgemm_stride_k(H, depth);
  for (int64_t r = 0; r < rows; r++) {
    float* __restrict o = out + r * H;
    for (int64_t t0 = 0; t0 < depth; t0 += sk) {
      const int64_t t1 = std::min(depth, t0 + sk);
      const int64_t ta = std::max(t0, vis[2 * r]), tb = std::min(t1, vis[2 * r + 1]);
      // head dimensions [0, hr) done:
      const int64_t hr = fast ? fma_column_groups(p + r * depth, v, H, ta, tb, 0, H, acc) : 0;
      for (int64_t h = hr; h < H; h++) acc[h] = 0.0f;
      for (int64_t t = ta; t < tb && hr < H; t++) {
        const float pt = p[r * depth + t];
        const float* __restrict vt = v + t * H;
        for (int64_t h = hr; h < H; h++) acc[h] = std::fma(pt, vt[h], acc[h]);
      }
      if (t0 == 0 && !accumulate)
        for (int64_t h = 0; h < H; h++) o[h] = acc[h];
      else
        for (int64_t h = 0; h < H; h++) o[h] = o[h] + acc[h];
    }
  }
}

template <bool fast>
OGX_INLINE void prompt_head(const OrtAttentionHead& a, std::vector<float>& scratch) {
  const int64_t H = a.H, kv_block = std::min(ort_attention_kv_block(H), a.total);
  const int64_t q_block = std::min(std::min(ort_attention_kv_block(H), 2 * H), a.S);
  // scratch: l, m [q_block], scores [q_block, kv_block], out [q_block, H], keys transposed [H, kv_block], acc
  const int64_t acc_n = std::max(kv_block, H);
  scratch.resize((size_t)(2 * q_block + q_block * kv_block + q_block * H + H * kv_block + acc_n));
  float* l = scratch.data();
  float* m = l + q_block;
  float* scores = m + q_block;
  float* tmp = scores + q_block * kv_block;
  float* kt = tmp + q_block * H;
  float* acc = kt + H * kv_block;
  std::vector<int64_t> vis((size_t)(2 * q_block));  // [q_block, 2]: each row's visible keys in the block
  for (int64_t q0 = 0; q0 < a.S; q0 += q_block) {
    const int64_t rows = std::min(q_block, a.S - q0);
    std::fill(l, l + rows, 0.0f);
    std::fill(m, m + rows, kLowest);
    std::fill(tmp, tmp + rows * H, 0.0f);
    const int64_t causal_end = a.past + q0 + rows;  // no key at or past this is visible to the block
    for (int64_t ir = 0; ir < a.total && ir < causal_end; ir += kv_block) {
      const int64_t cols = std::min(kv_block, a.total - ir);
      transpose_keys(a.k + ir * H, cols, H, kt);
      for (int64_t r = 0; r < rows; r++) {
        float* p = scores + r * cols;
        // keys [wstart, limit) are visible (causal, local window); a right-padded prompt's padding rows (past the
        // row's total) see the real keys, the window counted back from the last (their outputs are unused).
        const int64_t limit = std::min(a.past + q0 + r + 1, a.total);
        const int64_t wstart = a.window >= 0 && limit > a.window ? limit - a.window : 0;
        const int64_t j0 = std::clamp<int64_t>(wstart - ir, 0, cols), j1 = std::clamp<int64_t>(limit - ir, 0, cols);
        vis[2 * r] = j0;
        vis[2 * r + 1] = std::max(j0, j1);
        std::fill(p, p + cols, 0.0f);
        if (j0 >= j1) continue;  // the whole row is masked in this block: no state update
        qk_row<fast>(a.q + (q0 + r) * H, kt, cols, j0, j1, H, a.scale, acc, p);
        if (a.bias)
          for (int64_t j = j0; j < j1; j++) p[j] = p[j] + a.bias[(q0 + r) * a.bias_stride + ir + j];
        float rowmax = kLowest;
        int64_t jm = j0;
        if constexpr (fast) rowmax = row_max(p, j0, j1, &jm);
        for (int64_t j = jm; j < j1; j++) rowmax = std::max(rowmax, p[j]);
        const float m_old = m[r];
        m[r] = std::max(m[r], rowmax);
        const float m_diff = m_old - m[r];
        const float rowsum = sum_exp(p, j0, j1, m[r]);
        if (ir != 0) {
          const float e = std::exp(m_diff);
          l[r] = e * l[r] + rowsum;
          for (int64_t h = 0; h < H; h++) tmp[r * H + h] *= e;
        } else {
          l[r] = rowsum;
        }
      }
      pv_block<fast>(scores, rows, vis.data(), a.v + ir * H, cols, H, ir != 0, acc, tmp);
    }
    for (int64_t r = 0; r < rows; r++) {
      const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
      for (int64_t h = 0; h < H; h++) a.out[(q0 + r) * a.out_stride + h] = tmp[r * H + h] * inv;
    }
  }
}

OGX_INLINE void decode_head(const OrtAttentionHead& a, std::vector<float>& scratch) {
  const int64_t H = a.H, T = a.total;
  scratch.resize((size_t)(T + H));
  float* scores = scratch.data();
  float* tmp = scores + T;
  for (int64_t t = 0; t < T; t++) {  // MlasGQADecodeQK: 8 lanes of rounded products, then the tail in order
    const float* kr = a.k + t * H;
    float lane[8] = {};
    int64_t h = 0;
    for (; h + 8 <= H; h += 8)
      for (int j = 0; j < 8; j++) lane[j] = lane[j] + a.q[h + j] * kr[h + j];
    float sum = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    for (; h < H; h++) sum = sum + a.q[h] * kr[h];
    scores[t] = sum * a.scale;
  }
  if (a.bias)
    for (int64_t t = 0; t < T; t++) scores[t] = scores[t] + a.bias[t];
  const int64_t wstart = a.window >= 0 && T > a.window ? T - a.window : 0;
  for (int64_t t = 0; t < wstart; t++) scores[t] = kLowest;
  float rowmax = kLowest;
  for (int64_t t = 0; t < T; t++) rowmax = std::max(rowmax, scores[t]);
  if (rowmax == kLowest) {
    std::fill(a.out, a.out + H, 0.0f);
    return;
  }
  const float rowsum = sum_exp(scores, 0, T, rowmax);
  std::fill(tmp, tmp + H, 0.0f);
  for (int64_t t = 0; t < T; t++)  // MlasGQADecodeSV: a running sum of rounded products
    for (int64_t h = 0; h < H; h++) tmp[h] = tmp[h] + scores[t] * a.v[t * H + h];
  const float inv = rowsum > 0.0f ? 1.0f / rowsum : 0.0f;
  for (int64_t h = 0; h < H; h++) a.out[h] = tmp[h] * inv;
}

template <bool fast>
OGX_INLINE void head_body(const OrtAttentionHead& a, std::vector<float>& scratch) {
  if (a.S == 1) decode_head(a, scratch);
  else prompt_head<fast>(a, scratch);
}

__attribute__((target("avx2,fma"))) void head_fma(const OrtAttentionHead& a, std::vector<float>& s) {
  head_body<true>(a, s);
}
void head_plain(const OrtAttentionHead& a, std::vector<float>& s) { head_body<false>(a, s); }

}  // namespace

int64_t ort_attention_kv_block(int64_t H) {
  // ONNX Runtime's Env::GetL2CacheSize() on Linux: sysconf(_SC_LEVEL2_CACHE_SIZE); where the system does not say
  // (0 or -1), 1 MiB rather than one-key blocks.
  static const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE) > 0 ? sysconf(_SC_LEVEL2_CACHE_SIZE) : (1l << 20);
  const int64_t b = (int64_t)(int)l2 / ((int64_t)sizeof(float) * 4 * (H + H));
  return std::max<int64_t>(b, 1);
}

void ort_attention_head(const OrtAttentionHead& a, std::vector<float>& scratch) {
  static const bool has_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (has_fma) head_fma(a, scratch);
  else head_plain(a, scratch);
}

}  // namespace ogx::cpu
