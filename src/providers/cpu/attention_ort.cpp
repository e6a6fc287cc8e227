// See attention_ort.h. The helpers are compiled for CPUs with FMA (fused operations as instructions) and without
// (libm's correctly rounded fmaf, same bits); -ffp-contract=off keeps every other * and + rounding on its own.
#include "providers/cpu/attention_ort.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
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
  return std::ldexp(p, (int)m);  // vscalefps: one rounding
}

// x[i] <- exp(x[i] - max); returns the sum in MLAS's 16 lanes, reduced as its AVX-512 kernel does.
OGX_INLINE float sum_exp(float* x, int64_t n, float max) {
  const float neg = -max;
  float lane[16] = {};
  for (int64_t i = 0; i < n; i++) {
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

// scores[r][j] = scale * q[r] . k[j] for rows x cols, MLAS SGEMM order: fused chains over the head in depth blocks,
// the first block times the scale, later ones fused onto it. kt: scratch for the keys transposed [H][cols].
OGX_INLINE void qk_block(const float* q, int64_t rows, const float* k, int64_t cols, int64_t H, float scale,
                         float* kt, float* acc, float* scores) {
  for (int64_t d = 0; d < H; d++)
    for (int64_t j = 0; j < cols; j++) kt[d * cols + j] = k[j * H + d];
  const int64_t sk = sgemm_stride_k(cols, H);
  for (int64_t r = 0; r < rows; r++) {
    float* s = scores + r * cols;
    for (int64_t d0 = 0; d0 < H; d0 += sk) {
      const int64_t d1 = std::min(H, d0 + sk);
      std::fill(acc, acc + cols, 0.0f);
      for (int64_t d = d0; d < d1; d++) {
        const float qd = q[r * H + d];
        const float* kd = kt + d * cols;
        for (int64_t j = 0; j < cols; j++) acc[j] = std::fma(qd, kd[j], acc[j]);
      }
      if (d0 == 0)
        for (int64_t j = 0; j < cols; j++) s[j] = acc[j] * scale;
      else
        for (int64_t j = 0; j < cols; j++) s[j] = std::fma(acc[j], scale, s[j]);
    }
  }
}

// out[r] (+)= p[r] . v over depth `depth` keys, MLAS SGEMM order (alpha 1): accumulate adds onto out.
OGX_INLINE void pv_block(const float* p, int64_t rows, const float* v, int64_t depth, int64_t H, bool accumulate,
                         float* acc, float* out) {
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
    float* o = out + r * H;
    for (int64_t t0 = 0; t0 < depth; t0 += sk) {
      const int64_t t1 = std::min(depth, t0 + sk);
      std::fill(acc, acc + H, 0.0f);
      for (int64_t t = t0; t < t1; t++) {
        const float pt = p[r * depth + t];
        const float* vt = v + t * H;
        for (int64_t h = 0; h < H; h++) acc[h] = std::fma(pt, vt[h], acc[h]);
      }
      if (t0 == 0 && !accumulate)
        std::copy(acc, acc + H, o);
      else
        for (int64_t h = 0; h < H; h++) o[h] = o[h] + acc[h];
    }
  }
}

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
  for (int64_t q0 = 0; q0 < a.S; q0 += q_block) {
    const int64_t rows = std::min(q_block, a.S - q0);
    std::fill(l, l + rows, 0.0f);
    std::fill(m, m + rows, kLowest);
    std::fill(tmp, tmp + rows * H, 0.0f);
    const int64_t causal_end = a.past + q0 + rows;  // no key at or past this is visible to the block
    for (int64_t ir = 0; ir < a.total && ir < causal_end; ir += kv_block) {
      const int64_t cols = std::min(kv_block, a.total - ir);
      qk_block(a.q + q0 * H, rows, a.k + ir * H, cols, H, a.scale, kt, acc, scores);
      for (int64_t r = 0; r < rows; r++) {
        float* p = scores + r * cols;
        if (a.bias)
          for (int64_t j = 0; j < cols; j++) p[j] = p[j] + a.bias[(q0 + r) * a.bias_stride + ir + j];
        // keys [0, limit) are causal; a right-padded prompt's padding rows (past the row's total) see the real
        // keys, the window counted back from the last one (as the reference kernel; their outputs are unused)
        const int64_t limit = std::min(a.past + q0 + r + 1, a.total);
        const int64_t wstart = a.window >= 0 && limit > a.window ? limit - a.window : 0;
        for (int64_t j = 0; j < cols; j++)
          if (ir + j >= limit || ir + j < wstart) p[j] = kLowest;
        float rowmax = kLowest;
        for (int64_t j = 0; j < cols; j++) rowmax = std::max(rowmax, p[j]);
        if (rowmax == kLowest) {
          std::fill(p, p + cols, 0.0f);
          continue;
        }
        const float m_old = m[r];
        m[r] = std::max(m[r], rowmax);
        const float m_diff = m_old - m[r];
        const float rowsum = sum_exp(p, cols, m[r]);
        if (ir != 0) {
          const float e = std::exp(m_diff);
          l[r] = e * l[r] + rowsum;
          for (int64_t h = 0; h < H; h++) tmp[r * H + h] *= e;
        } else {
          l[r] = rowsum;
        }
      }
      pv_block(scores, rows, a.v + ir * H, cols, H, ir != 0, acc, tmp);
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
  const float rowsum = sum_exp(scores, T, rowmax);
  std::fill(tmp, tmp + H, 0.0f);
  for (int64_t t = 0; t < T; t++)  // MlasGQADecodeSV: a running sum of rounded products
    for (int64_t h = 0; h < H; h++) tmp[h] = tmp[h] + scores[t] * a.v[t * H + h];
  const float inv = rowsum > 0.0f ? 1.0f / rowsum : 0.0f;
  for (int64_t h = 0; h < H; h++) a.out[h] = tmp[h] * inv;
}

OGX_INLINE void head_body(const OrtAttentionHead& a, std::vector<float>& scratch) {
  if (a.S == 1) decode_head(a, scratch);
  else prompt_head(a, scratch);
}

__attribute__((target("avx2,fma"))) void head_fma(const OrtAttentionHead& a, std::vector<float>& s) { head_body(a, s); }
void head_plain(const OrtAttentionHead& a, std::vector<float>& s) { head_body(a, s); }

}  // namespace

int64_t ort_attention_kv_block(int64_t H) {
  // ONNX Runtime's Env::GetL2CacheSize() on Linux: sysconf(_SC_LEVEL2_CACHE_SIZE).
  static const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  const int64_t b = (int64_t)(int)l2 / ((int64_t)sizeof(float) * 4 * (H + H));
  return std::max<int64_t>(b, 1);
}

void ort_attention_head(const OrtAttentionHead& a, std::vector<float>& scratch) {
  static const bool has_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (has_fma) head_fma(a, scratch);
  else head_plain(a, scratch);
}

}  // namespace ogx::cpu
